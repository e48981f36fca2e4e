// A streaming CSV reader (RFC 4180): quoted cells, doubled quotes, CRLF or LF line ends, line
// breaks inside quotes, a UTF-8 BOM; the delimiter (`,` or `;`) is whichever of the two the
// header row holds more of outside quotes. Bytes go in as they arrive; whole records come out.
// Anything that is not CSV is a CsvError naming what and where (1 = the first data row).

export class CsvError extends Error {
  constructor(
    message: string,
    /** The data row (1 = the first after the header), or 0 for the header. */
    public readonly row: number,
  ) {
    super(message);
  }
}

export class CsvReader {
  private readonly decoder = new TextDecoder('utf-8', { fatal: true });
  private buf = '';
  private delimiter: ',' | ';' | null = null;
  /** Records ended so far, the header included. */
  private records = 0;
  private header: string[] | null = null;

  /** The header's names, once read. */
  get columns(): string[] | null {
    return this.header;
  }

  /** Data rows read so far. */
  get rows(): number {
    return Math.max(0, this.records - 1);
  }

  /** Feeds bytes; answers the data rows they complete. */
  push(bytes: Uint8Array): string[][] {
    let text: string;
    try {
      text = this.decoder.decode(bytes, { stream: true });
    } catch {
      // The rows before the bad byte are read, so the error names the row it is in.
      this.buf += validPrefix(bytes);
      this.drain(false);
      throw new CsvError('is not UTF-8 text (invalid byte sequence)', this.rows + 1);
    }
    this.buf += text;
    const nul = this.buf.indexOf('\0');
    if (nul >= 0) {
      this.buf = this.buf.slice(0, nul);
      this.drain(false);
      throw new CsvError('is not text: it holds NUL bytes', this.rows + 1);
    }
    return this.drain(false);
  }

  /** The end of the input: the last row (without a line end), and the checks only the end can make. */
  end(): string[][] {
    try {
      this.buf += this.decoder.decode();
    } catch {
      throw new CsvError('is not UTF-8 text (it ends inside a character)', this.rows + 1);
    }
    const out = this.drain(true);
    if (!this.header) throw new CsvError('has no header row', 0);
    return out;
  }

  private drain(final: boolean): string[][] {
    const out: string[][] = [];
    if (this.delimiter === null) {
      const end = headerEnd(this.buf);
      if (end < 0 && !final) return out;
      this.delimiter = delimiterOf(end < 0 ? this.buf : this.buf.slice(0, end));
    }
    let pos = 0;
    for (;;) {
      const r = readRecord(this.buf, pos, this.delimiter, final);
      if (r === null) break;
      pos = r.next;
      if (r.unterminated) throw new CsvError('has an unterminated quoted cell', this.rows + 1);
      const cells = r.cells;
      // A blank line is no row (a trailing line end, an empty line between rows).
      if (cells.length === 1 && cells[0] === '' && !r.quoted) continue;
      this.records++;
      if (!this.header) this.header = checkHeader(cells);
      else if (cells.length > this.header.length)
        throw new CsvError(`has ${cells.length} cells, more than the header's ${this.header.length}`, this.rows);
      else out.push(cells);
    }
    this.buf = this.buf.slice(pos);
    return out;
  }
}

/** The text of the longest prefix of `bytes` that is whole UTF-8 (found by halving). */
function validPrefix(bytes: Uint8Array): string {
  let lo = 0;
  let hi = bytes.length;
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    try {
      new TextDecoder('utf-8', { fatal: true }).decode(bytes.subarray(0, mid), { stream: true });
      lo = mid;
    } catch {
      hi = mid - 1;
    }
  }
  return new TextDecoder('utf-8').decode(bytes.subarray(0, lo), { stream: true });
}

/** Where the first record ends (outside quotes), or -1 when it has not ended yet. */
function headerEnd(s: string): number {
  let quoted = false;
  for (let i = 0; i < s.length; i++) {
    const c = s[i];
    if (c === '"') quoted = !quoted;
    else if (!quoted && (c === '\n' || c === '\r')) return i;
  }
  return -1;
}

function delimiterOf(header: string): ',' | ';' {
  let commas = 0;
  let semicolons = 0;
  let quoted = false;
  for (const c of header) {
    if (c === '"') quoted = !quoted;
    else if (!quoted && c === ',') commas++;
    else if (!quoted && c === ';') semicolons++;
  }
  return semicolons > commas ? ';' : ',';
}

function checkHeader(cells: string[]): string[] {
  const names = cells.map((c) => c.trim());
  const seen = new Set<string>();
  for (const [i, name] of names.entries()) {
    if (!name) throw new CsvError(`header: column ${i + 1} has no name`, 0);
    if (seen.has(name.toLowerCase())) throw new CsvError(`header: the column name "${name}" appears twice`, 0);
    seen.add(name.toLowerCase());
  }
  return names;
}

interface ReadRecord {
  cells: string[];
  next: number;
  /** Whether any cell was quoted (a quoted empty cell is a row, a bare blank line is not). */
  quoted: boolean;
  unterminated?: boolean;
}

/** One record from `pos`, or null when the text ends inside it (more may come). */
function readRecord(s: string, pos: number, delimiter: string, final: boolean): ReadRecord | null {
  if (pos >= s.length) return null;
  const cells: string[] = [];
  let cell = '';
  let cellStart = true;
  let quoted = false;
  let i = pos;
  while (i < s.length) {
    const c = s[i];
    if (c === '"' && cellStart) {
      // A quoted cell, up to its closing quote ("" is one quote); line ends inside are kept.
      quoted = true;
      let j = i + 1;
      for (;;) {
        const q = s.indexOf('"', j);
        if (q < 0 || (q + 1 >= s.length && !final)) {
          return final ? { cells, next: s.length, quoted, unterminated: true } : null;
        }
        cell += s.slice(j, q);
        if (s[q + 1] !== '"') {
          i = q + 1;
          break;
        }
        cell += '"';
        j = q + 2;
      }
      cellStart = false;
    } else if (c === delimiter) {
      cells.push(cell);
      cell = '';
      cellStart = true;
      i++;
    } else if (c === '\n' || c === '\r') {
      if (c === '\r' && i + 1 >= s.length && !final) return null; // its LF may come next
      cells.push(cell);
      return { cells, next: c === '\r' && s[i + 1] === '\n' ? i + 2 : i + 1, quoted };
    } else {
      // Plain text (a quote inside an unquoted cell is kept as it is).
      let j = i + 1;
      while (j < s.length && s[j] !== delimiter && s[j] !== '\n' && s[j] !== '\r' && s[j] !== '"') j++;
      if (s[j] === '"') j++;
      cell += s.slice(i, j);
      cellStart = false;
      i = j;
    }
  }
  if (!final) return null;
  cells.push(cell);
  return { cells, next: i, quoted };
}
