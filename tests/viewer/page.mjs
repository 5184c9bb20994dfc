// Builds a viewer page from the assembled template (build/web/viewer.html) and a data
// object, escaping exactly as the CLI's writer does, for the hand-made fixtures.
import {readFileSync, writeFileSync} from 'node:fs';

export function safeJson(obj)
{
    return JSON.stringify(obj).replace(/[<>&\u2028\u2029]/g,
        (c) => '\\u' + c.charCodeAt(0).toString(16).padStart(4, '0'));
}

export function writePage(template, obj, out)
{
    const page = readFileSync(template, 'utf8');
    const at = page.indexOf('@KESTREL_DATA@');
    if (at < 0) throw new Error(template + ': no @KESTREL_DATA@');
    writeFileSync(out, page.slice(0, at) + safeJson(obj) + page.slice(at + '@KESTREL_DATA@'.length));
    return out;
}
