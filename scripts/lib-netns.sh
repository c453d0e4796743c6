# Sourced by the real-engine scripts: re-run the calling script inside a network namespace of its own that has
# only a loopback interface (unshare --user --net), so that nothing it starts can reach a network; the proof that
# a preview or an end-to-end run is offline is that it works there. Set NETWORK_ISOLATION=off to run without it
# (for example where unprivileged user namespaces are disabled; the script then says so).
isolate_network() {
  if [ "${INSIDE_NETNS:-}" = 1 ] || [ "${NETWORK_ISOLATION:-on}" = off ]; then
    return 0
  fi
  if unshare --user --map-root-user --net true 2>/dev/null; then
    export INSIDE_NETNS=1
    exec unshare --user --map-root-user --net bash -c 'ip link set lo up && exec "$0" "$@"' bash "$@"
  fi
  echo "note: no network namespace available here (unprivileged user namespaces are off); running without isolation" >&2
}
