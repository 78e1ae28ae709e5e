package bus

import "testing"

// TestPrefixesApart: the prefix and the topic are joined with nothing
// between, so a topic can end up in another prefix's names (the first
// case below, which operating.md warns of). Refusing a prefix without a
// separator at its end, or adding one, would move the queues of every
// deployment running with the default "earshot". That is not needed for
// deployments of earshot itself: they publish the same topics in the
// same group, so distinct prefixes always give them distinct names.
func TestPrefixesApart(t *testing.T) {
	if queueName("ab", "c", "g") != queueName("a", "bc", "g") || "ab"+"c" != "a"+"bc" {
		t.Fatal("prefix and topic are no longer joined as they were: existing queues would move")
	}
	// Every topic earshot has published (TestQueueNamesKept).
	topics := []string{"match.stored", "match.created"}
	prefixes := []string{"", "earshot", "earshot2", "earshot.", "earshot_", "e", "ear", "prod", "prod.", "prod-eu", "match.", "match.stored"}
	exchanges, queues := map[string]string{}, map[string]string{}
	for _, p := range prefixes {
		for _, topic := range topics {
			ex, q := p+topic, queueName(p, topic, DefaultGroup)
			if other, ok := exchanges[ex]; ok && other != p {
				t.Errorf("prefixes %q and %q share exchange %q", p, other, ex)
			}
			if other, ok := queues[q]; ok && other != p {
				t.Errorf("prefixes %q and %q share queue %q", p, other, q)
			}
			exchanges[ex], queues[q] = p, p
		}
	}
}
