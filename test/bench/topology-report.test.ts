// What the topology run counts as a defect: any answer a fault may not cost.
import assert from "node:assert/strict";
import { test } from "node:test";
import type { Outcome } from "../../bench/topology-load.js";
import { type Step, unexpectedAnswers } from "../../bench/topology-report.js";

const outcome = (status: Outcome["status"], kind: Outcome["kind"] = "search"): Outcome => ({
  step: "5. Failover",
  kind,
  start: 0,
  end: 1,
  status,
});
const step = (outcomes: Outcome[]): Step => ({
  name: "5. Failover",
  outcomes,
  began: 0,
  ended: 1,
  transitions: [],
  notes: [],
});

test("a fault may cost 503s: 2xx, 503, timeouts and failed connections are not answers to blame", () => {
  const fine = [200, 201, 503, 503, "timeout", "network"] as const;
  assert.equal(unexpectedAnswers(step(fine.map((s) => outcome(s)))), undefined);
});

test("any other answer is a defect, told by status and kind: a 400 as much as a 500", () => {
  const line = unexpectedAnswers(
    step([
      outcome(400),
      outcome(400, "get"),
      outcome(404, "get"),
      outcome(500, "create"),
      outcome(503),
    ]),
  );
  assert.equal(
    line,
    "5. Failover: 4 answers neither 2xx nor 503: 400 × 2 (search 1, get 1), 404 × 1 (get 1), 500 × 1 (create 1).",
  );
});
