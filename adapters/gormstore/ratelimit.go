package gormstore

import (
	"context"
	"time"

	"github.com/earshothq/earshot/ports"
)

// RateLimiter counts requests per key in fixed one-minute windows kept in
// the database, so the limit holds across every replica on it. One
// statement per request both counts and answers.
type RateLimiter struct{ db *DB }

var _ ports.RateLimiter = (*RateLimiter)(nil)

// NewRateLimiter returns the database-backed limiter of db.
func NewRateLimiter(db *DB) *RateLimiter { return &RateLimiter{db: db} }

// rateWindow is the length of a counting window.
const rateWindow = time.Minute

// takeQuota counts a request and answers with the window, in one
// statement on a cached prepared statement.
const takeQuota = `INSERT INTO rate_windows (key, started, count) VALUES (?, ?, 1)
		ON CONFLICT (key) DO UPDATE SET
			started = CASE WHEN rate_windows.started <= ? THEN excluded.started ELSE rate_windows.started END,
			count   = CASE WHEN rate_windows.started <= ? THEN 1 ELSE rate_windows.count + 1 END
		RETURNING started, count`

// Take implements ports.RateLimiter.
func (l *RateLimiter) Take(ctx context.Context, key string, limit int) (ports.Quota, error) {
	now := l.db.gorm.NowFunc()
	nowUs, expired := micros(now), micros(now.Add(-rateWindow))
	rows, err := l.db.query(ctx, takeQuota, key, nowUs, expired, expired)
	if err != nil {
		return ports.Quota{}, translate(err, "rate window")
	}
	defer rows.Close()
	var started, count int64
	if rows.Next() {
		if err := rows.Scan(&started, &count); err != nil {
			return ports.Quota{}, translate(err, "rate window")
		}
	}
	if err := rows.Err(); err != nil {
		return ports.Quota{}, translate(err, "rate window")
	}
	q := ports.Quota{Limit: limit, Reset: fromMicros(started).Add(rateWindow).Sub(now)}
	if count > int64(limit) {
		return q, nil
	}
	q.Allowed, q.Remaining = true, limit-int(count)
	return q, nil
}

// Peek implements ports.RateLimiter. It reads through a cached statement,
// since the API peeks before every key lookup.
func (l *RateLimiter) Peek(ctx context.Context, key string, limit int) (ports.Quota, error) {
	now := l.db.gorm.NowFunc()
	rows, err := l.db.query(ctx, "SELECT started, count FROM rate_windows WHERE key = ?", key)
	if err != nil {
		return ports.Quota{}, translate(err, "rate window")
	}
	defer rows.Close()
	var started, count int64
	found := rows.Next()
	if found {
		if err := rows.Scan(&started, &count); err != nil {
			return ports.Quota{}, translate(err, "rate window")
		}
	}
	if err := rows.Err(); err != nil {
		return ports.Quota{}, translate(err, "rate window")
	}
	if !found || started <= micros(now.Add(-rateWindow)) {
		return ports.Quota{Allowed: limit > 0, Limit: limit, Remaining: max(limit, 0), Reset: rateWindow}, nil
	}
	q := ports.Quota{Limit: limit, Reset: fromMicros(started).Add(rateWindow).Sub(now)}
	if count < int64(limit) {
		q.Allowed, q.Remaining = true, limit-int(count)
	}
	return q, nil
}

// SweepRateWindows deletes windows that ended, so keys seen once do not
// stay forever.
func (l *RateLimiter) SweepRateWindows(ctx context.Context) error {
	cut := micros(l.db.gorm.NowFunc().Add(-2 * rateWindow))
	return translate(l.db.with(ctx).Exec("DELETE FROM rate_windows WHERE started < ?", cut).Error, "rate window")
}
