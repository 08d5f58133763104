// The ports tests choose themselves rather than take from the system (port 0): the clusters'
// of test/support/clusters.ts. TEST_PORT_RANGE=FROM-TO sets where, for a machine whose ports
// there are taken or firewalled.

/** Below Linux's ephemeral range (32768-60999), so no client's outgoing port can take one. */
export const DEFAULT_PORT_RANGE = "20000-32000";

/** TEST_PORT_RANGE (or the given text) as its two ends, both included; an error if malformed. */
export function portRange(text: string = process.env.TEST_PORT_RANGE || DEFAULT_PORT_RANGE): {
  from: number;
  to: number;
} {
  const match = /^\s*(\d{1,5})\s*-\s*(\d{1,5})\s*$/.exec(text);
  const [from, to] = match ? [Number(match[1]), Number(match[2])] : [0, 0];
  if (from < 1 || to > 65_535 || from > to) {
    throw new Error(
      `TEST_PORT_RANGE must be FROM-TO, two ports from 1 to 65535 with FROM <= TO (the default is ${DEFAULT_PORT_RANGE}), not "${text}"`,
    );
  }
  return { from, to };
}
