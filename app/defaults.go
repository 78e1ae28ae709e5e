package app

import (
	"log/slog"

	"github.com/earshothq/earshot/ports"
)

// What a constructor puts in place of a clock, logger or metrics port
// left nil.

func orSystemClock(c ports.Clock) ports.Clock {
	if c == nil {
		return ports.SystemClock{}
	}
	return c
}

func orDefaultLog(l *slog.Logger) *slog.Logger {
	if l == nil {
		return slog.Default()
	}
	return l
}

func orNoMetrics(m ports.Metrics) ports.Metrics {
	if m == nil {
		return ports.NoMetrics{}
	}
	return m
}
