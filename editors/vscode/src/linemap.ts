/* Heat follows edits: a change that replaces lines [start, end] with text of `added`
 * newlines moves every decorated line below it by the difference, and drops the
 * decorated lines the change removed (their code is gone). The line the change
 * starts on keeps its heat: typing within a hot line does not lose it. */

export interface LineChange {
    startLine: number; /* 0-based, of the replaced range's start */
    endLine: number; /* 0-based, of its end */
    addedLines: number; /* newlines in the inserted text */
}

export function shiftLines<T extends { line: number }>(items: T[], c: LineChange): T[] {
    const delta = c.addedLines - (c.endLine - c.startLine);
    if (delta === 0) return items;
    const out: T[] = [];
    for (const it of items) {
        if (it.line <= c.startLine) out.push(it);
        else if (it.line > c.endLine) out.push({ ...it, line: it.line + delta });
        /* else: the line was inside the removed range */
    }
    return out;
}

export function countNewlines(s: string): number {
    let n = 0;
    for (let i = 0; i < s.length; i++) if (s.charCodeAt(i) === 10) n++;
    return n;
}
