package core

import (
	"reflect"
	"testing"
)

// FuzzParseCookieJar: any upload is either refused with KindInvalid or
// yields only the platform's cookies, with its session cookies, in a form
// whose canonical encoding reads back unchanged.
func FuzzParseCookieJar(f *testing.F) {
	for _, s := range []string{cookieEditorX, netscapeReddit, playwrightFacebook, "[]", "{}", `{"cookies":null}`,
		"#HttpOnly_\n", ".x.com\tTRUE\t/\tTRUE\t1e308\tauth_token\ta\n", `[{"expires":-1e400}]`} {
		for _, p := range Platforms {
			f.Add(string(p), []byte(s))
		}
	}
	f.Fuzz(func(t *testing.T, platform string, data []byte) {
		p := Platform(platform)
		got, err := ParseCookieJar(p, data)
		if err != nil {
			if !IsKind(err, KindInvalid) {
				t.Fatalf("error of kind %v: %v", KindOf(err), err)
			}
			return
		}
		if len(got) == 0 || len(got) > MaxJarCookies {
			t.Fatalf("%d cookies", len(got))
		}
		for _, c := range got {
			if !cookieOnPlatform(p, c.Domain) || c.Name == "" || c.Path == "" {
				t.Fatalf("kept %+v", c)
			}
		}
		for _, names := range sessionCookies[p] {
			if !hasCookie(got, names) {
				t.Fatalf("accepted without %v", names)
			}
		}
		again, err := ParseCookieJar(p, EncodeCookieJar(got))
		if err != nil || !reflect.DeepEqual(again, got) {
			t.Fatalf("canonical form does not read back: %v\n%+v\n%+v", err, got, again)
		}
	})
}
