#!/bin/sh
# check_svg.sh ROOT - every committed *.svg under ROOT/docs must be
# well-formed XML, or a browser shows an error instead of the picture.
# xmllint comes with libxml2-utils (scripts/lib/prereqs.sh) and with macOS;
# without it the check fails, saying so: a check that cannot run is no pass.
# --nonet: the DOCTYPE names a DTD on the web, which is not fetched.
root=${1:?usage: check_svg.sh ROOT}
command -v xmllint >/dev/null 2>&1 || {
    echo "check_svg: xmllint missing (apt-get install libxml2-utils)" >&2
    exit 1
}
cd "$root" || exit 1
files=$(git ls-files 'docs/*.svg' 2>/dev/null)
[ -n "$files" ] || files=$(find docs -name '*.svg')
[ -n "$files" ] || { echo "check_svg: no SVG under $root/docs" >&2; exit 1; }
bad=0 count=0
for f in $files; do
    count=$((count + 1))
    if xmllint --noout --nonet "$f"; then
        echo "  ok    $f"
    else
        echo "  FAIL  $f: not well-formed XML"
        bad=$((bad + 1))
    fi
done
echo "$count SVG files, $bad malformed"
[ "$bad" -eq 0 ]
