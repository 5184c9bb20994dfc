# Turns one `kestrel ... --help` text into man(7) roff, line for line, so that the
# manual says what --help says (packaging/man.sh; tests/packaging/test_man.sh checks).
#   usage: lines (and their indented continuations)  -> a no-fill synopsis block
#   "  TAG   description" (two spaces, a tag, two or more spaces) and the deeper-indented
#   lines under it                                     -> .TP entries
#   other lines                                        -> filled text; blank lines -> .PP
function esc(s) {
    gsub(/\\/, "\\e", s)
    gsub(/-/, "\\-", s)
    if (s ~ /^[.']/) s = "\\&" s
    return s
}
function flush_tp() {
    if (tag != "") { print ".TP"; print esc(tag); print esc(desc); after_tp = 1 }
    tag = ""; desc = ""
}
BEGIN { state = "start"; tag = ""; desc = "" }
{
    line = $0
    sub(/[ \t]+$/, "", line)
    if (state == "start" || state == "usage") {
        if (state == "start" && line ~ /^usage: /) {
            state = "usage"; print ".nf"; print esc(substr(line, 8)); next
        }
        if (state == "usage" && line ~ /^ /) {
            l = line; sub(/^       /, "", l); print esc(l); next
        }
        if (state == "usage") print ".fi"
        state = "body"
    }
    if (line == "") { flush_tp(); para = 1; next }
    if (para) { print ".PP"; para = 0; after_tp = 0 }
    if (match(line, /^  [^ ]+( [^ ]+)*  +[^ ]/)) {
        RLENGTH--
        flush_tp()
        tag = substr(line, 3, RLENGTH - 2); sub(/ +$/, "", tag)
        desc = substr(line, RLENGTH + 1)
        next
    }
    if (tag != "" && line ~ /^    /) {
        l = line; sub(/^ +/, "", l); desc = desc " " l; next
    }
    flush_tp()
    if (after_tp) { print ".PP"; after_tp = 0 }
    l = line; sub(/^ +/, "", l)
    print esc(l)
}
END { if (state == "usage") print ".fi"; flush_tp() }
