package server

import (
	"errors"
	"flag"
	"strings"
	"testing"
	"time"

	"github.com/earshothq/earshot/core"
)

// The retry schedule a deployment starts with holds to the bounds core
// sets for one (core.ParseRetrySchedule: 1 to 20 waits of 10ms to 24h), so
// a receiver is never retried in a tight loop nor a delivery held queued
// for weeks by a slip in the setting.
func TestConfigRetryScheduleWithinCoreBounds(t *testing.T) {
	read := func(v string) (Config, error) {
		fs := flag.NewFlagSet("t", flag.ContinueOnError)
		r := ConfigFlags(fs, func(k string) string {
			if k == "EARSHOT_WEBHOOK_RETRY_SCHEDULE" {
				return v
			}
			return ""
		})
		_ = fs.Parse(nil)
		return r()
	}
	for _, v := range []string{
		"1ms,1ms,1ms",
		"5ms",
		"1m,5m,720h",
		"25h",
		strings.TrimSuffix(strings.Repeat("1m,", 21), ","),
	} {
		_, err := read(v)
		var ce *ConfigError
		if !errors.As(err, &ce) || ce.Name != "EARSHOT_WEBHOOK_RETRY_SCHEDULE" || !strings.Contains(ce.Accepts, "10ms to 24h") {
			t.Errorf("EARSHOT_WEBHOOK_RETRY_SCHEDULE=%s: %v, want a refusal naming the bounds", v, err)
		}
	}
	for _, v := range []string{"10ms", "1s", "24h", " 1m , 5m ,30m", strings.TrimSuffix(strings.Repeat("1m,", 20), ",")} {
		cfg, err := read(v)
		if err != nil {
			t.Errorf("EARSHOT_WEBHOOK_RETRY_SCHEDULE=%s: %v", v, err)
			continue
		}
		want, _ := core.ParseRetrySchedule(v)
		if len(cfg.WebhookRetrySchedule) != len(want) || cfg.WebhookRetrySchedule[0] != want[0] {
			t.Errorf("EARSHOT_WEBHOOK_RETRY_SCHEDULE=%s: %v, want %v", v, cfg.WebhookRetrySchedule, want)
		}
	}
	if cfg, _ := read(""); len(cfg.WebhookRetrySchedule) != 3 || cfg.WebhookRetrySchedule[1] != 5*time.Minute {
		t.Errorf("default schedule %v", cfg.WebhookRetrySchedule)
	}
}
