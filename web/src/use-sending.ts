// A dialog's call to the service: busy while it runs; a refusal is shown in the dialog, unless
// it ends the session (401) or the dialog explains it beside a field.
import { useState } from "preact/hooks";
import { describeFailure, endsSession } from "./session.js";

export function useSending(onFailure: (error: unknown) => void) {
  const [busy, setBusy] = useState(false);
  const [refused, setRefused] = useState<string>();
  /** `explained` shows a refusal its own way and says so; the rest is shown as a message. */
  const send = async (call: () => Promise<void>, explained?: (error: unknown) => boolean) => {
    setBusy(true);
    setRefused(undefined);
    try {
      await call();
    } catch (error) {
      if (endsSession(error)) onFailure(error);
      else if (!explained?.(error)) setRefused(describeFailure(error));
      setBusy(false);
    }
  };
  return { busy, refused, send };
}
