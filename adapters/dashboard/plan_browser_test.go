package dashboard

// The plan page's meters as Chromium draws them at phone width; skipped
// without Chromium.

import (
	"net/http/httptest"
	"testing"
)

// At 375 px each meter is a bar a person sees, as tall as at desktop
// width and across the card: the column the phone's layout stacks it in
// once squeezed it to a line.
func TestPlanMetersShowOnAPhone(t *testing.T) {
	d := newTestDashboard(t, item(1, "about acme", "ada", "https://x.com/1"))
	srv := httptest.NewServer(d)
	t.Cleanup(srv.Close)
	ctx := browserAt(t, srv, 375)
	open(t, ctx, srv.URL+"/app/plan")
	got := evalJS[string](t, ctx, `(function(){var ms=document.querySelectorAll("meter"),out=[];
if(!ms.length)return "no meter";
ms.forEach(function(m){var r=m.getBoundingClientRect(),card=m.closest(".card").getBoundingClientRect();
if(r.height<10||r.width<card.width/2)out.push(m.closest(".meter").querySelector(".label").textContent.trim()+" "+r.width.toFixed(0)+"x"+r.height.toFixed(1)+" in a card "+card.width.toFixed(0)+" wide")});
return out.join("; ")})()`)
	if got != "" {
		t.Errorf("meters squeezed at phone width: %s", got)
	}
}
