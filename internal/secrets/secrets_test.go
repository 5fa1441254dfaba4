package secrets

import (
	"strings"
	"testing"
)

func TestCheck(t *testing.T) {
	for _, tc := range []struct{ name, secret, want string }{
		{"random", "f3a9c1e07b6d42d8a5e9b0c4d7f21e6a9b3c5d8e", ""},
		{"missing", "", "missing"},
		{"short", "Zx8#kQ2!vB7@", "too short"},
		{"repeated", strings.Repeat("ab", 24), "entropy"},
		{"sequential", "abcdefghijklmnopqrstuvwxyz012345", "entropy in its steps"},
		{"sequential digits", "0123456789012345678901234567890123456789", "entropy"},
		{"published", "demo-buyer-secret-change-me", "published"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := Check("Key", tc.secret)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("got %v, want an error containing %q", err, tc.want)
			}
		})
	}
}
