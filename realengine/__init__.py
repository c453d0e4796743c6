"""The program on the real Pulumi engine (toolchain built by `bash scripts/toolchain.sh`): previews and, with the
local control plane, `pulumi up` and `pulumi destroy`. See docs/real-engine.md."""
