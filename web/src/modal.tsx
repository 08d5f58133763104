import type { ComponentChildren } from "preact";
import { useEffect, useRef } from "preact/hooks";

/** A modal dialog: focus moves in and stays there, Escape cancels, focus returns after. */
export function Modal(props: { title: string; onCancel: () => void; children: ComponentChildren }) {
  const ref = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    ref.current?.showModal();
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
