/**
 * Walks a JSON array one element at a time, so a large body is decoded element by element (in
 * slices, never as one tree built for the whole body). The walker checks only what lies between
 * elements (whitespace, commas, brackets) and finds where each element ends; JSON.parse then
 * checks each element exactly. Together: the body is valid JSON exactly when JSON.parse of the
 * whole would have accepted it.
 */

/** JSON's structural characters (as char codes, and bytes: they are ASCII). */
export const SPACE = 0x20;
export const TAB = 0x09;
export const LF = 0x0a;
export const CR = 0x0d;
export const QUOTE = 0x22;
export const BACKSLASH = 0x5c;
export const COMMA = 0x2c;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
export const OPEN_OBJECT = 0x7b;
export const CLOSE_OBJECT = 0x7d;

/** The first position at or after `i` that is not JSON whitespace. */
export const skipSpace = (text: string, i: number): number => {
  for (;;) {
    const c = text.charCodeAt(i);
    if (c !== SPACE && c !== LF && c !== CR && c !== TAB) return i;
    i++;
  }
};

/** The position after the string whose opening quote is at `i`, or -1 when it never closes. */
const stringEnd = (text: string, i: number): number => {
  for (let j = i + 1; j < text.length; j++) {
    const c = text.charCodeAt(j);
    if (c === BACKSLASH) j++;
    else if (c === QUOTE) return j + 1;
  }
  return -1;
};

/**
 * The position after the value that starts at `i`, or -1 when none can end there. Objects and
 * arrays end at their matching bracket (strings skipped, bracket kinds not matched: JSON.parse of
 * the element finds any mismatch); anything else ends at the next comma, bracket or whitespace.
 */
export const valueEnd = (text: string, i: number): number => {
  const first = text.charCodeAt(i);
  if (first === QUOTE) return stringEnd(text, i);
  if (first === OPEN_OBJECT || first === OPEN_ARRAY) {
    let depth = 0;
    for (let j = i; j < text.length; j++) {
      const c = text.charCodeAt(j);
      if (c === QUOTE) {
        j = stringEnd(text, j) - 1;
        if (j < 0) return -1;
      } else if (c === OPEN_OBJECT || c === OPEN_ARRAY) depth++;
      else if (c === CLOSE_OBJECT || c === CLOSE_ARRAY) {
        if (--depth === 0) return j + 1;
      }
    }
    return -1;
  }
  let j = i;
  for (; j < text.length; j++) {
    const c = text.charCodeAt(j);
    if (c === COMMA || c === CLOSE_ARRAY || c === CLOSE_OBJECT || c === SPACE || c === LF || c === CR || c === TAB) break;
  }
  return j > i ? j : -1;
};

export const isOpenArray = (text: string, i: number): boolean => text.charCodeAt(i) === OPEN_ARRAY;
export const isCloseArray = (text: string, i: number): boolean => text.charCodeAt(i) === CLOSE_ARRAY;
export const isComma = (text: string, i: number): boolean => text.charCodeAt(i) === COMMA;

/** Whether the text at `i` could begin a JSON value other than an array (a body that is JSON but not a list). */
export const beginsOtherValue = (text: string, i: number): boolean => /^[{"\-0-9tfn]/.test(text.charAt(i));
