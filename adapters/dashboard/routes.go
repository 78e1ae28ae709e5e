package dashboard

import (
	"net/http"
	"net/url"
	"strings"
)

// route is one row of the dashboard. Public routes need no session; every
// other route answers a visitor without one by sending them to sign in.
type route struct {
	pattern string
	public  bool
	handle  http.HandlerFunc
}

// routeList is the one list of the dashboard's routes.
func (d *Dashboard) routeList() []route {
	webhooks, channels := d.webhookPage(), d.channelPage()
	return []route{
		{"GET /{$}", true, d.rootRedirect},
		{"GET /app/static/{file}", true, d.static},
		{"GET /favicon.ico", true, d.favicon},
		{"GET /app/login", true, d.showLogin},
		{"POST /app/login", true, d.requestLink},
		{"GET /app/login/{token}", true, d.showLink},
		{"POST /app/login/link", true, d.useLink},
		{"GET /app/account/confirm/{token}", true, d.showAddressLink},
		{"POST /app/account/confirm", true, d.confirmAddress},
		{"GET /app/alerts/off/{token}", true, d.showAlertsOff},
		{alertsOffPost, true, d.alertsOff},
		{"/app/", true, d.notFound},

		{"GET /app/{$}", false, d.showInbox},
		{"GET /app/events", false, d.events},
		{"GET /app/export", false, d.exportInbox},
		{"POST /app/matches/bulk", false, d.triageBulk},
		{"POST /app/matches/{id}", false, d.triageMatch},
		{"GET /app/phrases", false, d.showPhrases},
		{"POST /app/phrases", false, d.addPhrase},
		{"POST /app/phrases/{id}/pause", false, d.pausePhrase},
		{"POST /app/phrases/{id}/resume", false, d.resumePhrase},
		{"GET /app/phrases/{id}/filters", false, d.showFilters},
		{"POST /app/phrases/{id}/filters", false, d.saveFilters},
		{"POST /app/phrases/{id}/apply", false, d.applyFilters},
		{"POST /app/phrases/{id}/apply/{set}/undo", false, d.undoApply},
		{"GET /app/phrases/{id}/delete", false, d.confirmDeletePhrase},
		{"POST /app/phrases/{id}/delete", false, d.deletePhrase},
		{"GET /app/trends", false, d.showTrends},
		{"GET /app/plan", false, d.showPlan},
		{"GET /app/account", false, d.showAccount},
		{"POST /app/account", false, d.requestAddress},
		{"POST /app/account/alerts", false, d.setAlertSchedule},
		{"GET /app/keys", false, d.showKeys},
		{"POST /app/keys", false, d.createAPIKey},
		{"POST /app/keys/{id}/revoke", false, d.revokeAPIKey},
		{"POST /app/ingest-keys", false, d.createIngestKey},
		{"POST /app/ingest-keys/{id}/revoke", false, d.revokeIngestKey},
		{"GET /app/webhooks", false, d.showWebhooks},
		{"POST /app/webhooks", false, d.createWebhook},
		{"GET /app/webhooks/{id}", false, d.showWebhook},
		{"POST /app/webhooks/{id}", false, d.editWebhook},
		{"POST /app/webhooks/{id}/active", false, webhooks.switchRow},
		{"POST /app/webhooks/{id}/test", false, webhooks.test},
		{"GET /app/webhooks/{id}/test", false, webhooks.testPage},
		{"POST /app/webhooks/{id}/deliveries/{did}/redeliver", false, webhooks.redeliver},
		{"GET /app/webhooks/{id}/rotate", false, d.confirmRotate},
		{"POST /app/webhooks/{id}/rotate", false, d.rotateSecret},
		{"POST /app/webhooks/{id}/replay", false, webhooks.replay},
		{"GET /app/webhooks/{id}/delete", false, webhooks.confirmDelete},
		{"POST /app/webhooks/{id}/delete", false, webhooks.delete},
		{"POST /app/channels", false, d.createChannel},
		{"GET /app/channels/{id}", false, d.showChannel},
		{"POST /app/channels/{id}", false, d.editChannel},
		{"POST /app/channels/{id}/destination", false, d.setDestination},
		{"POST /app/channels/{id}/active", false, channels.switchRow},
		{"POST /app/channels/{id}/test", false, channels.test},
		{"GET /app/channels/{id}/test", false, channels.testPage},
		{"POST /app/channels/{id}/deliveries/{did}/redeliver", false, channels.redeliver},
		{"POST /app/channels/{id}/replay", false, channels.replay},
		{"GET /app/channels/{id}/delete", false, channels.confirmDelete},
		{"POST /app/channels/{id}/delete", false, channels.delete},
		{"GET /app/accounts", false, d.showAccounts},
		{"GET /app/accounts/{id}/challenge", false, d.showChallenge},
		{"POST /app/accounts/{id}/resolve", false, d.resolveAccount},
		{"POST /app/accounts/{platform}/cookies", false, d.uploadJar},
		{"POST /app/accounts/helper-key", false, d.createHelperKey},
		{"GET /app/notifications", false, d.showNotifications},
		{"POST /app/notifications/read-all", false, d.markAllNotificationsRead},
		{"POST /app/notifications/{id}/read", false, d.markNotificationRead},
		{"POST /app/logout", false, d.signOut},
		{"POST /app/logout/everywhere", false, d.signOutEverywhere},
	}
}

// Patterns lists the pattern of every route, for the request metrics'
// route label.
func (d *Dashboard) Patterns() []string {
	var ps []string
	for _, rt := range d.routeList() {
		ps = append(ps, rt.pattern)
	}
	return ps
}

// alertsOffPost is the route of the alert emails' stop links, the one
// write taken from another origin (see alertsOff).
const alertsOffPost = "POST /app/alerts/off/{token}"

// unlimited are the signed-in writes no rate limit refuses: leaving.
var unlimited = map[string]bool{"POST /app/logout": true, "POST /app/logout/everywhere": true}

// sendRoutes are the writes that send a message out: their service
// takes the owner's write once it has decided to send (limitSends).
var sendRoutes = map[string]bool{
	"POST /app/webhooks/{id}/test": true, "POST /app/webhooks/{id}/deliveries/{did}/redeliver": true,
	"POST /app/webhooks/{id}/replay": true, "POST /app/channels/{id}/test": true,
	"POST /app/channels/{id}/deliveries/{did}/redeliver": true, "POST /app/channels/{id}/replay": true,
}

// bodyLimits are the routes whose body may exceed maxForm: the cookie jar
// upload.
var bodyLimits = map[string]int64{"POST /app/accounts/{platform}/cookies": maxJarForm}

// routes builds the handler: the security headers on every answer, then
// the refusal of cross-origin writes (but the stop links'), then the session check of the
// routes that need one, then the owner's rate limit of every signed-in
// write (limitWrites), then the bound on the body (maxForm, or the
// route's own in bodyLimits).
func (d *Dashboard) routes() http.Handler {
	mux := http.NewServeMux()
	for _, rt := range d.routeList() {
		limit, ok := bodyLimits[rt.pattern]
		if !ok {
			limit = maxForm
		}
		h := limitBody(rt.handle, limit)
		switch {
		case sendRoutes[rt.pattern]:
			h = d.limitSends(h)
		case !rt.public && strings.HasPrefix(rt.pattern, "POST ") && !unlimited[rt.pattern]:
			h = d.limitWrites(h)
		}
		if !rt.public {
			h = d.requireSession(h)
		}
		mux.Handle(rt.pattern, h)
	}
	cop := http.NewCrossOriginProtection()
	cop.SetDenyHandler(http.HandlerFunc(d.crossOrigin))
	// A mailbox provider's one-click POST comes from elsewhere and its
	// credential is the token in its path, not a cookie: see alertsOff.
	cop.AddInsecureBypassPattern(alertsOffPost)
	return securityHeaders(refuseForeignReferer(cop.Handler(mux), http.HandlerFunc(d.crossOrigin)))
}

// refuseForeignReferer refuses a write that carries neither
// Sec-Fetch-Site nor Origin but a Referer from another host: a browser
// too old to send the first two, or a privacy setting that drops them,
// still names the page the form was on, and CrossOriginProtection lets
// such a request through as if it came from no browser. The stop links'
// route is left alone, as it is there.
func refuseForeignReferer(next, deny http.Handler) http.Handler {
	bypass := http.NewServeMux()
	bypass.Handle(alertsOffPost, http.NotFoundHandler())
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.Method {
		case http.MethodGet, http.MethodHead, http.MethodOptions:
			next.ServeHTTP(w, r)
			return
		}
		ref := r.Header.Get("Referer")
		if ref == "" || r.Header.Get("Sec-Fetch-Site") != "" || r.Header.Get("Origin") != "" {
			next.ServeHTTP(w, r)
			return
		}
		if _, pattern := bypass.Handler(r); pattern != "" {
			next.ServeHTTP(w, r)
			return
		}
		if u, err := url.Parse(ref); err != nil || u.Host != r.Host {
			deny.ServeHTTP(w, r)
			return
		}
		next.ServeHTTP(w, r)
	})
}
