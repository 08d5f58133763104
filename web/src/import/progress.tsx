// The import's third step: how many of the file's books have been sent. Escape stops it.

export function ImportProgress({ done, total }: { done: number; total: number }) {
  return (
    <label class="progress" tabIndex={-1} data-focus>
      Importing: {done.toLocaleString("en")} of {total.toLocaleString("en")}
      <progress value={done} max={total} />
    </label>
  );
}
