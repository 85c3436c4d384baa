package load

import "testing"

// TestPlainMismatch: CUE's "conflicting values A and B (mismatched types
// KA and KB)" in the user's terms, whichever operand holds " and ".
func TestPlainMismatch(t *testing.T) {
	env := `{[#EnvName]:string,[=~"^INGEST_URL$"]:error("read by the sender, which never sees the server and its clients")}`
	for _, c := range []struct{ values, ka, kb, src, want string }{
		{`"x" and ` + env, "string", "struct", `"x"`, `must be a struct, not the string "x"`},
		{`null and ` + env, "null", "struct", `null`, `must be a struct, not null`},
		{env + ` and "x"`, "struct", "string", `"x"`, `must be a struct, not the string "x"`},
		{`"a and b" and int`, "string", "int", `"a and b"`, `must be an integer, not the string "a and b"`},
		{`"a and b" and {a: 1}`, "string", "struct", `"a and b" // why`, `must be a struct, not the string "a and b"`},
		{`8.0 and int`, "float", "int", `8.0`, `must be an integer, not the float 8.0`},
		{`1E+12 and string`, "int", "string", `1e12`, `must be a string, not the int 1e12`},
	} {
		got, ok := plainMismatch(c.values, c.ka, c.kb, c.src)
		if !ok || got != c.want {
			t.Errorf("plainMismatch(%s, %s, %s, source %s) = %q, %v; want %q", c.values, c.ka, c.kb, c.src, got, ok, c.want)
		}
	}
	if got, ok := plainMismatch(`{a: 1} and {b: 2}`, "struct", "struct", `x`); ok {
		t.Errorf("a reading with no user's operand gave %q", got)
	}
}
