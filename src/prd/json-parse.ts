// A small JSON parser that remembers where every key and value starts, so the validator can point at
// line:col. JSON.parse's error messages differ between Node 20, 22 and 24 and carry no reliable position.
// Built-ins only: the loop engine bundles this file.

export type JsonNode = JsonObject | JsonArray | JsonScalar;

export interface JsonObject {
  kind: 'object';
  offset: number;
  entries: JsonEntry[];
}

export interface JsonEntry {
  key: string;
  keyOffset: number;
  value: JsonNode;
}

export interface JsonArray {
  kind: 'array';
  offset: number;
  items: JsonNode[];
}

export interface JsonScalar {
  kind: 'string' | 'number' | 'boolean' | 'null';
  offset: number;
  value: string | number | boolean | null;
}

export interface JsonSyntaxError {
  offset: number;
  message: string;
}

export type JsonParseResult = { ok: true; root: JsonNode } | { ok: false; error: JsonSyntaxError };

// Deep enough for any plan, shallow enough that recursion never exhausts the stack.
export const MAX_DEPTH = 500;
const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
const WORD = /[A-Za-z_$][\w$]*/y;
const ESCAPES: Record<string, string> = { '"': '"', '\\': '\\', '/': '/', b: '\b', f: '\f', n: '\n', r: '\r', t: '\t' };

class Fault {
  constructor(
    readonly offset: number,
    readonly message: string,
  ) {}
}

export function parseJsonWithPositions(text: string): JsonParseResult {
  const parser = new Parser(text);
  try {
    return { ok: true, root: parser.document() };
  } catch (err) {
    if (err instanceof Fault) return { ok: false, error: { offset: err.offset, message: err.message } };
    throw err;
  }
}

class Parser {
  private pos = 0;

  constructor(private readonly text: string) {}

  document(): JsonNode {
    this.skipSpace();
    if (this.pos >= this.text.length) throw new Fault(0, 'the file is empty; expected a JSON object');
    const root = this.value(0);
    this.skipSpace();
    if (this.pos < this.text.length)
      throw new Fault(this.pos, `unexpected ${this.describeHere()} after the end of the JSON document`);
    return root;
  }

  private value(depth: number): JsonNode {
    if (depth > MAX_DEPTH) throw new Fault(this.pos, `nested more than ${MAX_DEPTH} levels deep`);
    this.skipSpace();
    const c = this.text[this.pos];
    if (c === '{') return this.object(depth);
    if (c === '[') return this.array(depth);
    if (c === '"') return { kind: 'string', offset: this.pos, value: this.string() };
    if (c === '-' || (c >= '0' && c <= '9')) return this.number();
    if (c === undefined) throw new Fault(this.pos, 'unexpected end of file; expected a value');
    if (c === "'") throw new Fault(this.pos, 'strings must use double quotes, not single quotes');
    return this.word();
  }

  private object(depth: number): JsonObject {
    const node: JsonObject = { kind: 'object', offset: this.pos, entries: [] };
    this.pos++;
    this.skipSpace();
    if (this.text[this.pos] === '}') return this.after(1, node);
    for (;;) {
      this.skipSpace();
      const keyOffset = this.pos;
      if (this.text[this.pos] !== '"') throw this.badKey();
      const key = this.string();
      this.skipSpace();
      if (this.text[this.pos] !== ':')
        throw new Fault(this.pos, `expected ':' after the key "${key}", found ${this.describeHere()}`);
      this.pos++;
      node.entries.push({ key, keyOffset, value: this.value(depth + 1) });
      if (this.endOfList('}', 'property')) return node;
    }
  }

  private array(depth: number): JsonArray {
    const node: JsonArray = { kind: 'array', offset: this.pos, items: [] };
    this.pos++;
    this.skipSpace();
    if (this.text[this.pos] === ']') return this.after(1, node);
    for (;;) {
      node.items.push(this.value(depth + 1));
      if (this.endOfList(']', 'item')) return node;
    }
  }

  /** After a member: true at the closing bracket, false after a comma; a clear message for the usual slips. */
  private endOfList(close: '}' | ']', member: 'property' | 'item'): boolean {
    this.skipSpace();
    const c = this.text[this.pos];
    if (c === close) return this.after(1, true);
    if (c === ',') {
      const comma = this.pos++;
      this.skipSpace();
      if (this.text[this.pos] === close) throw new Fault(comma, `trailing comma before '${close}'; remove it`);
      return false;
    }
    if (c === undefined) throw new Fault(this.pos, `unexpected end of file; expected ',' or '${close}'`);
    if (member === 'property' && c === '"') throw new Fault(this.pos, "missing ',' before this property");
    if (member === 'item' && /["{[\-0-9tfn]/.test(c)) throw new Fault(this.pos, "missing ',' before this item");
    throw new Fault(this.pos, `expected ',' or '${close}', found ${this.describeHere()}`);
  }

  private badKey(): Fault {
    const c = this.text[this.pos];
    if (c === "'") return new Fault(this.pos, 'property names must use double quotes, not single quotes');
    if (c !== undefined && /[A-Za-z_$]/.test(c)) return new Fault(this.pos, 'property names must be in double quotes');
    return new Fault(this.pos, `expected a property name in double quotes, found ${this.describeHere()}`);
  }

  private string(): string {
    const start = this.pos++;
    let out = '';
    let chunk = this.pos;
    for (;;) {
      const code = this.text.charCodeAt(this.pos);
      if (Number.isNaN(code)) throw new Fault(start, 'unterminated string');
      if (code === 0x22) break;
      if (code === 0x0a || code === 0x0d)
        throw new Fault(start, 'unterminated string (a string cannot span lines; write \\n)');
      if (code < 0x20) throw new Fault(this.pos, `control character U+${hex4(code)} inside a string; escape it`);
      if (code === 0x5c) {
        out += this.text.slice(chunk, this.pos) + this.escape();
        chunk = this.pos;
      } else this.pos++;
    }
    out += this.text.slice(chunk, this.pos);
    this.pos++;
    return out;
  }

  private escape(): string {
    const at = this.pos;
    const c = this.text[at + 1];
    if (c !== undefined && c in ESCAPES) return this.after(2, ESCAPES[c]);
    if (c === 'u' && /^[0-9a-fA-F]{4}$/.test(this.text.slice(at + 2, at + 6))) {
      this.pos += 6;
      return String.fromCharCode(parseInt(this.text.slice(at + 2, at + 6), 16));
    }
    if (c === undefined) throw new Fault(at, 'unterminated string');
    throw new Fault(at, `invalid escape '\\${c === 'u' ? this.text.slice(at + 1, at + 6) : c}' in a string`);
  }

  private number(): JsonScalar {
    const start = this.pos;
    NUMBER.lastIndex = start;
    const m = NUMBER.exec(this.text);
    const end = m ? start + m[0].length : start;
    if (!m || /[0-9A-Za-z.+\-_]/.test(this.text[end] ?? '')) {
      const token = /^[-+.\w]+/.exec(this.text.slice(start))?.[0] ?? this.text[start];
      throw new Fault(start, `invalid number '${token}'`);
    }
    this.pos = end;
    return { kind: 'number', offset: start, value: Number(m[0]) };
  }

  private word(): JsonScalar {
    const start = this.pos;
    WORD.lastIndex = start;
    const word = WORD.exec(this.text)?.[0];
    if (word === 'true' || word === 'false')
      return this.after(word.length, { kind: 'boolean', offset: start, value: word === 'true' });
    if (word === 'null') return this.after(4, { kind: 'null', offset: start, value: null });
    if (word)
      throw new Fault(start, `unexpected '${word}'; text must be in double quotes (and booleans are true or false)`);
    throw new Fault(start, `expected a value, found ${this.describeHere()}`);
  }

  /** Steps over `length` characters and returns `result`: the tail of every successful token. */
  private after<T>(length: number, result: T): T {
    this.pos += length;
    return result;
  }

  private skipSpace(): void {
    for (;;) {
      const c = this.text.charCodeAt(this.pos);
      if (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) this.pos++;
      else if (c === 0x2f && (this.text[this.pos + 1] === '/' || this.text[this.pos + 1] === '*')) {
        throw new Fault(this.pos, 'comments are not allowed in JSON');
      } else return;
    }
  }

  private describeHere(): string {
    const code = this.text.codePointAt(this.pos);
    if (code === undefined) return 'the end of the file';
    if (code < 0x20 || code === 0x7f || code === 0xfeff || (code >= 0x80 && code <= 0xa0))
      return `character U+${hex4(code)}`;
    return `'${String.fromCodePoint(code)}'`;
  }
}

function hex4(code: number): string {
  return code.toString(16).toUpperCase().padStart(4, '0');
}
