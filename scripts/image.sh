#!/usr/bin/env bash
# Builds billable's container image offline (issue 52): FROM scratch, on a root filesystem
# assembled here from the machine's own files, so no base image is pulled from anywhere.
#
#   scripts/image.sh [BINARY]          BINARY defaults to target/release/billable
#
# It does not build the binary (`make image` builds it first). The root filesystem holds:
#   /usr/local/bin/billable            the binary
#   the shared libraries `ldd` lists, and the dynamic loader, at the paths it lists them
#   /etc/ssl/certs/ca-certificates.crt the machine's CA bundle (Debian: ca-certificates), for
#                                      the TLS clients that read the system's roots
#   /etc/passwd, /etc/group            root and the user `billable` (uid/gid 10001)
#   /etc/nsswitch.conf                 host names from /etc/hosts before DNS (glibc's default
#                                      without the file asks DNS first)
#   /data                              owned by billable: the volume for the SQLite default
#   /tmp                               1777
# No font files: the renderer embeds its faces (crates/renderer/fonts, by include_bytes!).
# Characters those faces lack (CJK, Thai, Devanagari, ...) are taken from
# BILLABLE_PDF_FONT_DIRS or the system's fonts, of which the image has none: mount a font
# directory and set BILLABLE_PDF_FONT_DIRS for them.
#
# Tags billable:VERSION and billable:latest (IMAGE_NAME overrides "billable"), VERSION from
# the workspace's Cargo.toml. The docker format, since podman keeps a HEALTHCHECK only in it.
# Environment: IMAGE_NAME, IMAGE_SOURCE (the org.opencontainers.image.source label; else the
# workspace's `repository`, else git's remote "origin"), SOURCE_DATE_EPOCH (the .created
# label; default now), KEEP_CONTEXT=1 (keep and print the build directory).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
binary=${1:-$root/target/release/billable}
image=${IMAGE_NAME:-billable}
# Absolute: buildah's copier runs in another directory.
CONTAINERS_CONF=$(realpath "${CONTAINERS_CONF:-$root/deploy/containers.conf}")
export CONTAINERS_CONF

die() { echo "image.sh: $*" >&2; exit 1; }

[[ -f $binary && -x $binary ]] || die "no executable at $binary: build it first (make image does: cargo build --release -p app)"
command -v podman >/dev/null || die "podman is missing (Debian: apt-get install podman runc)"
command -v ldd >/dev/null || die "ldd is missing (Debian: libc-bin)"
certs=/etc/ssl/certs/ca-certificates.crt
[[ -s $certs ]] || die "no CA bundle at $certs (Debian: apt-get install ca-certificates)"

# [workspace.package]'s version and license.
workspace_key() {
    awk -v key="$1" '
        /^\[/ { inside = ($0 == "[workspace.package]") }
        inside && $1 == key && $2 == "=" { v = $3; gsub(/"/, "", v); print v; exit }
    ' "$root/Cargo.toml"
}
version=$(workspace_key version)
license=$(workspace_key license)
[[ -n $version ]] || die "no version in [workspace.package] of $root/Cargo.toml"
source=${IMAGE_SOURCE:-$(workspace_key repository)}
if [[ -z $source ]]; then
    source=$(git -C "$root" remote get-url origin 2>/dev/null || true)
fi
revision=$(git -C "$root" rev-parse HEAD 2>/dev/null || true)
if [[ -n $revision ]] && [[ -n $(git -C "$root" status --porcelain --untracked-files=no 2>/dev/null) ]]; then
    revision="$revision-dirty"
fi
created=$(date -u ${SOURCE_DATE_EPOCH:+-d "@$SOURCE_DATE_EPOCH"} +%Y-%m-%dT%H:%M:%SZ)

context=$(mktemp -d "${TMPDIR:-/tmp}/billable-image.XXXXXX")
if [[ ${KEEP_CONTEXT:-} == 1 ]]; then
    echo "build context: $context"
else
    trap 'rm -rf "$context"' EXIT
fi
rootfs=$context/rootfs

# The binary.
install -D -m 0755 "$binary" "$rootfs/usr/local/bin/billable"

# Exactly the libraries ldd lists ("name => /path (addr)", and the loader as "/path (addr)";
# the vDSO has no file), each copied (symlinks resolved) to the path ldd names.
if ! lddout=$(ldd "$binary" 2>&1); then
    # A static executable: ldd says so and fails. Nothing to copy.
    grep -Eq 'not a dynamic executable|statically linked' <<<"$lddout" || die "ldd $binary: $lddout"
    lddout=
fi
if grep -q 'not found' <<<"$lddout"; then
    die "ldd cannot find libraries of $binary:"$'\n'"$(grep 'not found' <<<"$lddout")"
fi
libraries=()
while read -r first second third _; do
    if [[ $second == "=>" && $third == /* ]]; then
        libraries+=("$third")
    elif [[ $first == /* ]]; then
        libraries+=("$first")
    fi
done <<<"$lddout"
for library in "${libraries[@]}"; do
    install -D -m 0755 "$(readlink -f "$library")" "$rootfs$library"
done

# CA certificates.
install -D -m 0644 "$certs" "$rootfs$certs"

# Users, groups and name lookup.
install -d -m 0755 "$rootfs/etc"
cat >"$rootfs/etc/passwd" <<'EOF'
root:x:0:0:root:/root:/sbin/nologin
billable:x:10001:10001:billable:/data:/sbin/nologin
nobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin
EOF
cat >"$rootfs/etc/group" <<'EOF'
root:x:0:
billable:x:10001:
nogroup:x:65534:
EOF
cat >"$rootfs/etc/nsswitch.conf" <<'EOF'
passwd: files
group:  files
hosts:  files dns
EOF
chmod 0644 "$rootfs"/etc/{passwd,group,nsswitch.conf}

# /tmp for anyone, sticky. /data is copied by a second COPY --chown (COPY makes everything
# root's, and --chown on an empty directory named as the source does not reach the
# directory itself, only what it holds: so its parent is copied).
install -d -m 1777 "$rootfs/tmp"
install -d -m 0755 "$context/owned/data"

labels=(
    "org.opencontainers.image.title=billable"
    "org.opencontainers.image.description=Self-hosted invoicing: the billable REST API, on SQLite in /data or on PostgreSQL"
    "org.opencontainers.image.version=$version"
    "org.opencontainers.image.licenses=$license"
    "org.opencontainers.image.created=$created"
)
[[ -n $source ]] && labels+=("org.opencontainers.image.source=$source")
[[ -n $revision ]] && labels+=("org.opencontainers.image.revision=$revision")
[[ -n $source ]] || echo "image.sh: warning: no source URL (set IMAGE_SOURCE, or repository in [workspace.package]); the image has no org.opencontainers.image.source label" >&2

{
    echo "# Generated by scripts/image.sh; built with podman build --format docker."
    echo "FROM scratch"
    echo "COPY rootfs /"
    echo "COPY --chown=10001:10001 owned/ /"
    for label in "${labels[@]}"; do
        key=${label%%=*}
        value=${label#*=}
        value=${value//\\/\\\\}
        printf 'LABEL %s="%s"\n' "$key" "${value//\"/\\\"}"
    done
    cat <<'EOF'
# Every interface of the container, which publishes only what -p names. SQLite on the
# volume. The CA bundle for the TLS clients that honour SSL_CERT_FILE. Log lines without
# colour codes (tracing honours NO_COLOR): they go to a log file, not a terminal.
ENV BILLABLE_LISTEN=0.0.0.0:8080 \
    DATABASE_URL=sqlite:///data/billable.db \
    BILLABLE_TRIGGER_HOST=0.0.0.0 \
    BILLABLE_RENDERER_LISTEN=0.0.0.0:3001 \
    SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt \
    NO_COLOR=1
USER 10001:10001
WORKDIR /data
VOLUME /data
EXPOSE 8080
# `billable healthcheck`: 0 when /readyz answers ready (BILLABLE_LISTEN, on the loopback).
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
    CMD ["/usr/local/bin/billable", "healthcheck"]
# SIGTERM drains requests in flight (actix-web, up to 30 s) and exits 0.
STOPSIGNAL SIGTERM
ENTRYPOINT ["/usr/local/bin/billable"]
CMD ["serve"]
EOF
} >"$context/Containerfile"

previous=$(podman image inspect --format '{{.Id}}' "$image:latest" 2>/dev/null || true)
started=$(date +%s.%N)
podman build --format docker --file "$context/Containerfile" \
    --tag "$image:$version" --tag "$image:latest" "$context"
elapsed=$(awk -v a="$started" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')

# The image this one replaces, when nothing else names it any more.
if [[ -n $previous && $previous != "$(podman image inspect --format '{{.Id}}' "$image:latest")" ]] &&
    [[ $(podman image inspect --format '{{len .RepoTags}}' "$previous" 2>/dev/null) == 0 ]]; then
    podman rmi "$previous" >/dev/null 2>&1 || true
fi

echo
echo "Containerfile:"
sed 's/^/    /' "$context/Containerfile"
echo
echo "root filesystem:"
(cd "$rootfs" && find . -mindepth 1 \( -type f -o -type l \) -printf '    /%P  %s\n' | sort)
echo

binary_size=$(stat -c %s "$binary")
image_size=$(podman image inspect --format '{{.Size}}' "$image:$version")
awk -v i="$image_size" -v b="$binary_size" -v name="$image:$version" -v t="$elapsed" 'BEGIN {
    ratio = i / b
    printf "%s: image %.1f MB, binary %.1f MB: %.3f times the binary (target 1.25: %s); podman build %s s\n",
        name, i / 1e6, b / 1e6, ratio, ratio <= 1.25 ? "within" : "OVER", t
}'
