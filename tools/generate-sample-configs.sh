#!/usr/bin/env bash
# Regenerate etc/<daemon>.conf.sample from the option definitions
# (oslo-config-generator, through the oslo.config.opts entry points in
# setup.cfg). Run after adding or changing an option.
set -o errexit -o nounset -o pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
GEN=${OSLO_CONFIG_GENERATOR:-$(dirname "$(command -v python3)")/oslo-config-generator}
[ -x "$GEN" ] || GEN=/opt/stack/venv/bin/oslo-config-generator
for daemon in minicinder miniapi minicompute; do
    namespaces=(--namespace ministack.common --namespace "$daemon")
    case $daemon in
        miniapi|minicompute) namespaces+=(--namespace oslo.messaging) ;;
    esac
    # The REST services validate tokens with keystonemiddleware
    # ([keystone_authtoken], as in nova.conf and cinder.conf).
    case $daemon in
        miniapi|minicinder) namespaces+=(--namespace keystonemiddleware.auth_token) ;;
    esac
    "$GEN" "${namespaces[@]}" --namespace oslo.log \
        --output-file "etc/$daemon.conf.sample" 2>/dev/null
    echo "wrote etc/$daemon.conf.sample"
done
