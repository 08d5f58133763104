// The import's last step: what it did, and Close.

export function ImportSummary({ summary, onClose }: { summary: string; onClose: () => void }) {
  return (
    <>
      <p role="status">{summary}</p>
      <div class="actions">
        <button type="button" data-focus onClick={onClose}>
          Close
        </button>
      </div>
    </>
  );
}
