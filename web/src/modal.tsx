import type { ComponentChildren } from "preact";
import { useId, useLayoutEffect, useRef } from "preact/hooks";

/** A modal dialog: focus moves in and stays there, Escape cancels, focus returns after. */
export function Modal(props: { title: string; onCancel: () => void; children: ComponentChildren }) {
  const ref = useRef<HTMLDialogElement>(null);
  // Its own: a dialog may open over another (signing in again over an edit).
  const titleId = useId();
  // Open as it shows, not a frame later: a key pressed at once goes to the dialog.
  useLayoutEffect(() => {
    const dialog = ref.current;
    dialog?.showModal();
    // Closed before it goes, the dialog gives the focus back to what had it when it opened.
    return () => dialog?.close();
  }, []);
  return (
    <dialog
      ref={ref}
      aria-labelledby={titleId}
      onCancel={(event) => {
        event.preventDefault();
        props.onCancel();
      }}
    >
      <h2 id={titleId}>{props.title}</h2>
      {props.children}
    </dialog>
  );
}
