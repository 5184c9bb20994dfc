# Inlines the stylesheet and the scripts that viewer.html names into one page:
#   <link rel="stylesheet" href="F">  ->  <style>contents of F</style>
#   <script src="F"></script>          ->  <script>contents of F</script>
# Run from web/. A file that would close its own element early is refused.
function inline(file, tag,    line, n) {
    n = 0
    while ((getline line < file) > 0) {
        if (tolower(line) ~ ("</" tag)) {
            printf "inline.awk: %s contains </%s\n", file, tag > "/dev/stderr"
            exit 1
        }
        print line
        n++
    }
    close(file)
    if (n == 0) { printf "inline.awk: %s is missing or empty\n", file > "/dev/stderr"; exit 1 }
}
/^<link rel="stylesheet" href="[^"]+">$/ {
    match($0, /href="[^"]+"/); f = substr($0, RSTART + 6, RLENGTH - 7)
    print "<style>"; inline(f, "style"); print "</style>"; next
}
/^<script src="[^"]+"><\/script>$/ {
    match($0, /src="[^"]+"/); f = substr($0, RSTART + 5, RLENGTH - 6)
    print "<script>"; inline(f, "script"); print "</script>"; next
}
{ print }
