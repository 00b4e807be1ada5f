#!/usr/bin/env bash
# Regenerates the vendored Swagger UI files in this directory from the npm
# package swagger-ui-dist (fetched with `npm pack`, which checks the
# registry's integrity hash): swagger-ui-bundle.js.gz and swagger-ui.css.gz
# (gzip -9n: no name or time stamp, so the same input gives the same
# bytes), favicon-32x32.png and LICENSE. Then it compares the sha256 of the
# uncompressed files with those listed in NOTICE.
#
# Usage: bash embed/docs/swagger-ui/update.sh [VERSION]   (or make swagger-ui)
# Needs npm, tar, gzip and sha256sum. Exit status 1 if the checksums differ
# from NOTICE: review the new files, then update NOTICE and README.md.
set -euo pipefail

version=${1:-5.18.2}
case $version in
*[!0-9.]* | "") echo "bad version: $version" >&2; exit 2 ;;
esac
dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

echo "fetching swagger-ui-dist@$version"
(cd "$tmp" && npm pack --silent "swagger-ui-dist@$version" >/dev/null)
tar -xzf "$tmp/swagger-ui-dist-$version.tgz" -C "$tmp"
pkg=$tmp/package
grep -q "\"version\": \"$version\"" "$pkg/package.json" ||
	{ echo "the package is not version $version" >&2; exit 1; }

for f in swagger-ui-bundle.js swagger-ui.css; do
	gzip -9n -c "$pkg/$f" >"$tmp/$f.gz"
	# The compressed file must give back the original, byte for byte.
	gzip -dc "$tmp/$f.gz" | cmp -s - "$pkg/$f" ||
		{ echo "$f.gz does not decompress to $f" >&2; exit 1; }
	mv "$tmp/$f.gz" "$dir/$f.gz"
done
cp "$pkg/favicon-32x32.png" "$pkg/LICENSE" "$dir/"

status=0
for f in swagger-ui-bundle.js swagger-ui.css favicon-32x32.png; do
	sum=$(sha256sum <"$pkg/$f" | cut -d' ' -f1)
	if grep -qx "  $sum  $f" "$dir/NOTICE"; then
		echo "$f: sha256 $sum, as in NOTICE"
	else
		echo "$f: sha256 $sum, NOT as in NOTICE"
		status=1
	fi
done
ls -l "$dir"/*.gz "$dir/favicon-32x32.png"
if [ "$status" != 0 ]; then
	echo "Review the new files, then update the version and checksums in NOTICE and README.md." >&2
fi
exit "$status"
