// Import a file of books, with a preview first: one dialog through the steps of use-import.ts.

import type { BookCatalogueClient } from "book-catalogue";
import { useLayoutEffect } from "preact/hooks";
import { Modal } from "../modal.js";
import { ChooseFile } from "./choose-file.js";
import { PreviewStep } from "./preview.js";
import { ImportProgress } from "./progress.js";
import { ImportSummary } from "./summary.js";
import { useImport } from "./use-import.js";

interface Props {
  client: BookCatalogueClient;
  onCancel: () => void;
  /** After an import: what it did, for the page to announce. */
  onDone: (summary: string) => void;
  onFailure: (error: unknown) => void;
}

export function ImportDialog({ client, onCancel, onDone, onFailure }: Props) {
  const { stage, keepDuplicates, setKeepDuplicates, years, setYears, read, run, stop } = useImport(
    client,
    onFailure,
  );
  // Each step replaces the controls of the one before: the keyboard's focus moves to the
  // step's own (marked data-focus), not to the page behind. It moves as the step shows, not a
  // frame later: an Enter pressed at once must reach the step's button.
  useLayoutEffect(() => {
    document.querySelector<HTMLElement>("dialog [data-focus]")?.focus();
  }, [stage.kind]);

  switch (stage.kind) {
    case "choose":
    case "reading":
      return (
        <Modal title="Import a file" onCancel={onCancel}>
          <ChooseFile
            reading={stage.kind === "reading" ? stage.name : undefined}
            problem={stage.kind === "choose" ? stage.problem : undefined}
            onFile={(file) => void read(file)}
            onCancel={onCancel}
          />
        </Modal>
      );
    case "preview":
      return (
        <Modal title="Import a file" onCancel={onCancel}>
          <PreviewStep
            preview={stage.preview}
            keepDuplicates={keepDuplicates}
            onKeepDuplicates={setKeepDuplicates}
            years={years}
            onYears={setYears}
            onCancel={onCancel}
            onImport={(plan) => void run(stage.preview, plan)}
          />
        </Modal>
      );
    case "importing":
      return (
        <Modal title="Import a file" onCancel={stop}>
          <ImportProgress done={stage.done} total={stage.total} />
        </Modal>
      );
    case "finished":
      return (
        <Modal title="Import a file" onCancel={() => onDone(stage.summary)}>
          <ImportSummary summary={stage.summary} onClose={() => onDone(stage.summary)} />
        </Modal>
      );
  }
}
