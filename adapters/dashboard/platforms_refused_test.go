package dashboard

import (
	"net/url"
	"regexp"
	"strings"
	"testing"
)

// ticked returns the platforms ticked in the form that posts to action.
func ticked(t *testing.T, body, action string) []string {
	t.Helper()
	i := strings.Index(body, `action="`+action+`"`)
	if i < 0 {
		t.Fatalf("no form posts to %s:\n%s", action, body)
	}
	form := body[i : i+strings.Index(body[i:], "</form>")]
	var out []string
	for _, m := range regexp.MustCompile(`name="platform" value="(\w+)" checked`).FindAllStringSubmatch(form, -1) {
		out = append(out, m[1])
	}
	return out
}

// A form refused for ticking no platform shows none ticked, as sent,
// beside the refusal that says so: not every platform, which the owner
// did not choose and which the next press would send.
func TestRefusedFormsKeepNoPlatformTicked(t *testing.T) {
	w := newRowWorld(t)
	none := "platforms must name at least one"
	hook := url.Values{"url": {"https://hooks.example.com/in"}, "min_score": {"70"}}
	r := postAs(w.d, "a", "/app/webhooks", hook.Encode())
	if r.Code != 400 || !strings.Contains(r.Body.String(), none) {
		t.Fatalf("a webhook without platforms: %d\n%s", r.Code, r.Body)
	}
	if got := ticked(t, r.Body.String(), "/app/webhooks"); len(got) != 0 {
		t.Errorf("the refused webhook form shows %v ticked", got)
	}
	slack := url.Values{"kind": {"slack"}, "url": {rowSlackURL}, "min_score": {"70"}}
	r = postAs(w.d, "a", "/app/channels", slack.Encode())
	if r.Code != 400 || !strings.Contains(r.Body.String(), none) {
		t.Fatalf("a channel without platforms: %d\n%s", r.Code, r.Body)
	}
	body := r.Body.String()
	refused := body[strings.Index(body, `id="add-slack"`):]
	if got := ticked(t, refused, "/app/channels"); len(got) != 0 {
		t.Errorf("the refused Slack form shows %v ticked", got)
	}
	if got := ticked(t, body[strings.Index(body, `id="add-discord"`):], "/app/channels"); len(got) != 3 {
		t.Errorf("a blank channel form shows %v ticked, want every platform", got)
	}
	_, ch := w.add(t, w.a)
	settings := url.Values{"min_score": {"70"}, "frequency": {"at once"}}
	r = postAs(w.d, "a", "/app/channels/"+ch.ID, settings.Encode())
	if r.Code != 400 || !strings.Contains(r.Body.String(), none) {
		t.Fatalf("channel settings without platforms: %d\n%s", r.Code, r.Body)
	}
	if got := ticked(t, r.Body.String(), "/app/channels/"+ch.ID); len(got) != 0 {
		t.Errorf("the refused settings form shows %v ticked", got)
	}
}
