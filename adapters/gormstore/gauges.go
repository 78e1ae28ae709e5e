package gormstore

import (
	"context"
	"time"
)

// Gauges are the depths of the work queues, for the metrics.
type Gauges struct {
	Unscored     int64     // matches stored and not scored yet
	Queued       int64     // webhook deliveries waiting for a try
	OldestQueued time.Time // when the oldest queued delivery was made; zero when none
}

// Gauges reads the depths of the work queues.
func (db *DB) Gauges(ctx context.Context) (Gauges, error) {
	var g Gauges
	if err := db.with(ctx).Model(&matchRow{}).Where("score IS NULL").Count(&g.Unscored).Error; err != nil {
		return Gauges{}, err
	}
	var queued struct{ N, Oldest int64 }
	if err := db.with(ctx).Model(&deliveryRow{}).Select("COUNT(*) AS n, COALESCE(MIN(created_at), 0) AS oldest").
		Where("status = 'queued'").Scan(&queued).Error; err != nil {
		return Gauges{}, err
	}
	g.Queued, g.OldestQueued = queued.N, fromMicros(queued.Oldest)
	return g, nil
}
