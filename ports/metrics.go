package ports

// Events the application counts. Each is a value of the event label of
// earshot_events_total.
const (
	EventPostsIngested  = "posts_ingested"
	EventPostsSkipped   = "posts_skipped"
	EventMatchesCreated = "matches_created"
	EventMatchesScored  = "matches_scored"
	EventScoringFailed  = "scoring_failed"
	EventDeliveriesOK   = "deliveries_delivered"
	EventDeliveriesFail = "deliveries_failed_try"
	EventAlertsSent     = "alerts_sent"
	EventAlertsFailed   = "alerts_failed"
	EventRedditReads    = "reddit_reads"
	EventRedditFailed   = "reddit_reads_failed"
	EventBusDropped     = "bus_events_dropped"
)

// Metrics counts what the application does. It is safe for concurrent
// use and never fails: metrics must not stop work.
type Metrics interface {
	Count(event string, n int)
}

// NoMetrics counts nothing, for tests and embedders without metrics.
type NoMetrics struct{}

// Count does nothing.
func (NoMetrics) Count(string, int) {}

// SourceMetrics counts the reddit poller's reads by the way each was
// answered. source is always one of RedditVias, so the label set is closed.
type SourceMetrics interface {
	// CountRead counts one read through source, or one refused or failed
	// attempt when ok is false.
	CountRead(source string, ok bool)
	// SetRemaining records the requests left in reddit's window, as its
	// X-Ratelimit-Remaining header said on the last answer through source.
	SetRemaining(source string, remaining float64)
}

// CountRead does nothing.
func (NoMetrics) CountRead(string, bool) {}

// SetRemaining does nothing.
func (NoMetrics) SetRemaining(string, float64) {}
