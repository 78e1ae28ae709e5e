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
