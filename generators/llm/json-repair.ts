/**
 * The one repair applied to a model's reply that is not valid JSON: strip Markdown code
 * fences, keep the outermost JSON object or array (dropping prose around it), and remove
 * trailing commas before `}` / `]`. String-aware throughout; nothing is ever evaluated.
 * Returns undefined when there is no JSON-looking value to extract.
 */
export function repairJson(text: string): string | undefined {
  const extracted = outermostJson(stripFences(text));
  return extracted === undefined ? undefined : removeTrailingCommas(extracted);
}

function stripFences(text: string): string {
  const fenced = /```[a-zA-Z0-9_-]*[ \t]*\r?\n([\s\S]*?)\r?\n?```/.exec(text);
  return fenced ? fenced[1] : text;
}

/** From the first `{` or `[` to its matching close (or to the end, if it never closes). */
function outermostJson(text: string): string | undefined {
  const start = text.search(/[{[]/);
  if (start < 0) return undefined;
  let depth = 0;
  let inString = false;
  for (let i = start; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (c === '\\') i++;
      else if (c === '"') inString = false;
    } else if (c === '"') inString = true;
    else if (c === '{' || c === '[') depth++;
    else if (c === '}' || c === ']') {
      depth--;
      if (depth === 0) return text.slice(start, i + 1);
    }
  }
  return text.slice(start);
}

function removeTrailingCommas(json: string): string {
  let out = '';
  let inString = false;
  for (let i = 0; i < json.length; i++) {
    const c = json[i];
    if (inString) {
      out += c;
      if (c === '\\') out += json[++i] ?? '';
      else if (c === '"') inString = false;
      continue;
    }
    if (c === '"') inString = true;
    if (c === ',' && /^\s*[}\]]/.test(json.slice(i + 1))) continue;
    out += c;
  }
  return out;
}
