package core_test

import (
	"strings"
	"testing"

	"github.com/earshothq/earshot/core"
)

func TestNewOwnerEmail(t *testing.T) {
	cases := []struct {
		in   string
		want string // empty: refused with KindInvalid
	}{
		{"ada@example.com", "ada@example.com"},
		{"  Ada@Example.COM ", "ada@example.com"},
		{"ada.lovelace+earshot@mail.example.co.uk", "ada.lovelace+earshot@mail.example.co.uk"},
		{"ada@localhost", "ada@localhost"},
		{strings.Repeat("a", 242) + "@example.com", strings.Repeat("a", 242) + "@example.com"},

		{"", ""},
		{"   ", ""},
		{"ada", ""},
		{"ada@", ""},
		{"@example.com", ""},
		{"ada@@example.com", ""},
		{"ada @example.com", ""},
		{"Ada <ada@example.com>", ""},
		{"<ada@example.com>", ""},
		{"ada@example.com (Ada)", ""},
		{"ada@example.com, bob@example.com", ""},
		{"ada@example.com\nBcc: eve@example.com", ""},
		{strings.Repeat("a", 243) + "@example.com", ""},
	}
	for _, c := range cases {
		t.Run(c.in, func(t *testing.T) {
			o, err := core.NewOwner(c.in, "Ada")
			if c.want == "" {
				requireKind(t, err, core.KindInvalid)
				if !strings.Contains(core.Message(err), "email") {
					t.Errorf("message %q does not name the field", core.Message(err))
				}
				return
			}
			if err != nil || o.Email != c.want {
				t.Fatalf("NewOwner(%q) = %+v, %v; want email %q", c.in, o, err, c.want)
			}
			if o.Name != "Ada" {
				t.Errorf("Name = %q", o.Name)
			}
		})
	}
}

func TestNewOwnerName(t *testing.T) {
	cases := []struct {
		name string
		in   string
		want string
		ok   bool
	}{
		{"empty", "", "", true},
		{"trimmed", "  Ada Lovelace \n", "Ada Lovelace", true},
		{"200 ASCII", strings.Repeat("a", 200), strings.Repeat("a", 200), true},
		{"201 ASCII", strings.Repeat("a", 201), "", false},
		{"200 after trimming", " " + strings.Repeat("a", 200) + " ", strings.Repeat("a", 200), true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			o, err := core.NewOwner("ada@example.com", c.in)
			if !c.ok {
				requireKind(t, err, core.KindInvalid)
				if !strings.Contains(core.Message(err), "name") {
					t.Errorf("message %q does not name the field", core.Message(err))
				}
				return
			}
			if err != nil || o.Name != c.want {
				t.Fatalf("NewOwner name %q = %q, %v; want %q", c.in, o.Name, err, c.want)
			}
		})
	}
}

// The limit is stated in characters, as for phrases, so a name in a
// script of multi-byte letters gets the same 200 as a Latin one.
func TestNewOwnerNameCountsCharacters(t *testing.T) {
	cases := []struct {
		name string
		in   string
		ok   bool
	}{
		{"200 two-byte", strings.Repeat("é", 200), true},
		{"200 three-byte", strings.Repeat("李", 200), true},
		{"201 two-byte", strings.Repeat("é", 201), false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := core.NewOwner("ada@example.com", c.in)
			if c.ok && err != nil {
				t.Errorf("refused a name of 200 characters: %v", err)
			}
			if !c.ok {
				requireKind(t, err, core.KindInvalid)
			}
		})
	}
}

// A name is held to a key name's rule: Postgres refuses a NUL and bytes
// that are not UTF-8 where SQLite keeps them, and the owner list prints
// one owner a line, its fields split by tabs.
func TestNewOwnerNameRefusesControlAndBadUTF8(t *testing.T) {
	for _, in := range []string{"Ada\x00", "Ada \xff", "Ada\tLovelace", "Ada\nLovelace", "Ada\u0007Lovelace"} {
		o, err := core.NewOwner("ada@example.com", in)
		if err == nil {
			t.Errorf("NewOwner name %q = %+v, want refused", in, o)
			continue
		}
		requireKind(t, err, core.KindInvalid)
		if !strings.Contains(core.Message(err), "name") {
			t.Errorf("message %q does not name the field", core.Message(err))
		}
	}
}

// A name stored before the rule on control characters stays as it is
// when only the address changes, and the change goes through.
func TestOwnerUpdateKeepsAStoredName(t *testing.T) {
	o := core.Owner{ID: "o1", Email: "ada@example.com", Name: "Ada\tLovelace"}
	email := "ada@example.org"
	got, err := o.Update(&email, nil)
	if err != nil || got.Email != email || got.Name != o.Name {
		t.Fatalf("Update(address) = %+v, %v", got, err)
	}
	name := "Ada\tL"
	if _, err := o.Update(nil, &name); err == nil {
		t.Fatalf("Update(name %q) accepted", name)
	}
	name = " Ada L "
	if got, err := o.Update(nil, &name); err != nil || got.Name != "Ada L" || got.Email != o.Email {
		t.Fatalf("Update(name) = %+v, %v", got, err)
	}
}

// An address whose domain is a literal IP ([10.0.0.5]) is no plain
// address: mail for it (sign-in links, address confirmations) would make
// the operator's mail server connect to whatever host the owner names,
// an internal one included.
func TestNewOwnerEmailRefusesDomainLiteral(t *testing.T) {
	for _, in := range []string{"ada@[127.0.0.1]", "ada@[10.0.0.5]", "ada@[IPv6:::1]"} {
		if o, err := core.NewOwner(in, "Ada"); !core.IsKind(err, core.KindInvalid) {
			t.Errorf("NewOwner(%q) = %+v, %v; want an invalid email", in, o, err)
		}
	}
}

// An address within MaxEmailLen as typed may grow past it in lower case
// (Ⱥ is two bytes, ⱥ three): the address kept is the lower-case one, so
// that is the one held to the bound, and the owner it makes passes
// NewOwner again (Update re-checks a kept address).
func TestNewOwnerEmailBoundAfterLowerCase(t *testing.T) {
	in := strings.Repeat("Ⱥ", 32) + "@" + strings.Repeat("b", 63) + "." + strings.Repeat("c", 63) + "." + strings.Repeat("d", 50) + ".ex"
	o, err := core.NewOwner(in, "Ada")
	if err == nil && len(o.Email) > core.MaxEmailLen {
		t.Fatalf("NewOwner(%d bytes) kept an address of %d bytes", len(in), len(o.Email))
	}
	if err != nil && !core.IsKind(err, core.KindInvalid) {
		t.Fatalf("NewOwner: %v", err)
	}
}
