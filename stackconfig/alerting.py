"""`alerting`: where Alertmanager sends alerts; every URL and key is a `secrets:` config key, never a value."""

from __future__ import annotations

from stackconfig.values import Model, SecretKey, ShortDuration, SlackChannel


class WebhookReceiverConfig(Model):
    url_secret: SecretKey


class SlackReceiverConfig(Model):
    webhook_url_secret: SecretKey
    channel: SlackChannel


class PagerDutyReceiverConfig(Model):
    routing_key_secret: SecretKey


class HeartbeatConfig(Model):
    """The dead-man's switch: the always-firing Watchdog alert pings this URL every `interval`."""

    url_secret: SecretKey
    interval: ShortDuration = "1m"


class AlertingConfig(Model):
    """Alertmanager receivers; critical alerts page (PagerDuty), warnings go to chat and the webhook."""

    webhook: WebhookReceiverConfig | None = None
    slack: SlackReceiverConfig | None = None
    pagerduty: PagerDutyReceiverConfig | None = None
    heartbeat: HeartbeatConfig | None = None

    @property
    def any_receiver(self) -> bool:
        return any((self.webhook, self.slack, self.pagerduty, self.heartbeat))

    @property
    def secret_keys(self) -> list[str]:
        """The `secrets:` keys the receivers read, sorted."""
        return sorted(k for k in (self.webhook and self.webhook.url_secret,
                                  self.slack and self.slack.webhook_url_secret,
                                  self.pagerduty and self.pagerduty.routing_key_secret,
                                  self.heartbeat and self.heartbeat.url_secret) if k)
