// A very small, safe markdown renderer for the agents' answers: paragraphs, "- " lists, **bold**,
// *italic* and `code`. It builds React elements (never HTML strings), so streamed text cannot inject markup.
import type { ReactNode } from "react";

const INLINE = /(\*\*[^*]+\*\*|`[^`]+`|\*[^*\s][^*]*\*)/g;

function inline(text: string, key: string): ReactNode[] {
  return text.split(INLINE).map((piece, i) => {
    const k = `${key}-${i}`;
    if (piece.startsWith("**") && piece.endsWith("**") && piece.length > 4) return <strong key={k}>{piece.slice(2, -2)}</strong>;
    if (piece.startsWith("`") && piece.endsWith("`") && piece.length > 2) return <code key={k}>{piece.slice(1, -1)}</code>;
    if (piece.startsWith("*") && piece.endsWith("*") && piece.length > 2) return <em key={k}>{piece.slice(1, -1)}</em>;
    return piece;
  });
}

type Block = { list: boolean; lines: string[] };

function blocks(text: string): Block[] {
  const out: Block[] = [];
  for (const para of text.split(/\n{2,}/)) {
    let current: Block | null = null;
    for (const line of para.split("\n")) {
      const list = /^\s*[-*] /.test(line);
      if (!current || current.list !== list) {
        current = { list, lines: [] };
        out.push(current);
      }
      current.lines.push(list ? line.replace(/^\s*[-*] /, "") : line);
    }
  }
  return out;
}

export function Markdown({ text }: { text: string }) {
  return (
    <>
      {blocks(text).map((block, b) =>
        block.list ? (
          <ul key={b}>
            {block.lines.map((l, i) => (
              <li key={i}>{inline(l, `${b}-${i}`)}</li>
            ))}
          </ul>
        ) : (
          <p key={b}>
            {block.lines.map((l, i) => (
              <span key={i}>
                {i > 0 && <br />}
                {inline(l, `${b}-${i}`)}
              </span>
            ))}
          </p>
        ),
      )}
    </>
  );
}
