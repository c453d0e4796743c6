#!/usr/bin/env bash
# Fail early, with a message that says what to set, when the repository is not configured for Pulumi:
# without it the Pulumi steps fail later with errors that do not name the missing setting.
# The Gcore token is not checked: it may come from the GCORE_PERMANENT_TOKEN secret or from the stack's
# Pulumi ESC environment (`pulumiConfig: gcore:permanentApiToken`).
set -euo pipefail
missing=0
if [ -z "${PULUMI_ORG:-}" ]; then
  echo "::error::Set the repository variable PULUMI_ORG (Settings → Secrets and variables → Actions → Variables) to the Pulumi Cloud organization that owns the stacks."
  missing=1
fi
if [ -z "${PULUMI_ACCESS_TOKEN:-}" ]; then
  echo "::error::Set the repository secret PULUMI_ACCESS_TOKEN (a Pulumi Cloud access token of a team or machine user)."
  missing=1
fi
exit "$missing"
