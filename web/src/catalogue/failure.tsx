// A failed call: a refused token ends the session; anything else is shown above the table,
// with a way to try again.
import { useState } from "preact/hooks";
import { describeFailure, endsSession } from "../session.js";

export function useFailure(onSessionEnded: (why: string) => void) {
  const [failure, setFailure] = useState<string>();
  /** What every call does with a failure: a 401 ends the session, the rest is shown. */
  const fail = (error: unknown) => {
    if (endsSession(error)) {
      onSessionEnded(describeFailure(error));
    } else {
      setFailure(describeFailure(error));
    }
  };
  return { failure, fail, clear: () => setFailure(undefined) };
}

export function FailureNotice(props: { failure: string; onRetry: () => void }) {
  return (
    <div class="error" role="alert">
      {props.failure}{" "}
      <button type="button" class="quiet" onClick={props.onRetry}>
        Try again
      </button>
    </div>
  );
}
