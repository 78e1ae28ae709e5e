package gormstore

import "testing"

// Migration 32 upper-cases the hex digits of the escapes of the webhooks
// stored before, as core.CheckWebhookURL now does, so an old address given
// again, in its old spelling or another, is refused as a second webhook;
// rows whose new form another of the owner's webhooks has or would get
// stay as they were, and channels are not touched.
func TestMigrationUpperCasesStoredWebhookEscapes(t *testing.T) {
	// Addresses as the build before stored them (its CheckWebhookURL's
	// output, which kept the hex case given), and what each must be
	// after the step.
	rows := []webhookURLRow{
		{"w1", "o1", "webhook", "https://a.example.com/a%2fb", "https://a.example.com/a%2Fb"},
		{"w2", "o1", "webhook", "https://b.example.com/%2e%2E/%c3%a9%20x?q=%2f&r=%e2%82%AC", "https://b.example.com/%2E%2E/%C3%A9%20x?q=%2F&r=%E2%82%AC"},
		{"w3", "o1", "webhook", "https://c.example.com/x?q=%zz%2%ab%a", "https://c.example.com/x?q=%zz%2%AB%a"},
		{"w4", "o1", "webhook", "https://d.example.com/a%2fb", "https://d.example.com/a%2fb"}, // w5 has the new form
		{"w5", "o1", "webhook", "https://d.example.com/a%2Fb", "https://d.example.com/a%2Fb"},
		{"w6", "o1", "webhook", "https://e.example.com/%3a%3A", "https://e.example.com/%3a%3A"}, // w7 would get it too
		{"w7", "o1", "webhook", "https://e.example.com/%3A%3a", "https://e.example.com/%3A%3a"},
		{"w8", "o2", "webhook", "https://d.example.com/a%2fb", "https://d.example.com/a%2Fb"}, // another owner's
		{"w9", "o1", "webhook", "https://f.example.com/abcdef", "https://f.example.com/abcdef"},
		{"c1", "o1", "slack", "https://hooks.slack.com/a%2fb", "https://hooks.slack.com/a%2fb"}, // a channel's label
	}
	// An old address given again is the same webhook, in its old
	// spelling as in another.
	again := []string{"https://a.example.com/a%2fb", "https://a.example.com/a%2Fb", "https://b.example.com/%2E%2e/%C3%A9%20x?q=%2f&r=%e2%82%ac"}
	checkWebhookURLStep(t, 31, rows, again)
}
