import type { ComponentChildren } from "preact";
import { useLayoutEffect, useRef } from "preact/hooks";

/** A modal dialog: focus moves in and stays there, Escape cancels, focus returns after. */
export function Modal(props: { title: string; onCancel: () => void; children: ComponentChildren }) {
  const ref = useRef<HTMLDialogElement>(null);
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
      aria-labelledby="dialog-title"
      onCancel={(event) => {
        event.preventDefault();
        props.onCancel();
      }}
    >
      <h2 id="dialog-title">{props.title}</h2>
      {props.children}
    </dialog>
  );
}
