/**
 * `work`'s result, or a rejection with `late()` once `ms` have passed; the timer is cleared
 * either way. The work itself goes on: whoever started it decides what a late result becomes.
 */
export async function withDeadline<T>(work: Promise<T>, ms: number, late: () => Error): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(late()), ms);
  });
  try {
    return await Promise.race([work, deadline]);
  } finally {
    clearTimeout(timer);
  }
}
