package schema

import (
	"encoding/json"
	"fmt"
)

// IntOrList decodes a CUE `int | [...int]` field as a list; a scalar is a
// list of one. Scalar reports which form the source used.
type IntOrList struct {
	Values []int
	Scalar bool
}

func (l *IntOrList) UnmarshalJSON(b []byte) error {
	var one int
	if err := json.Unmarshal(b, &one); err == nil {
		*l = IntOrList{Values: []int{one}, Scalar: true}
		return nil
	}
	var many []int
	if err := json.Unmarshal(b, &many); err != nil {
		return fmt.Errorf("want an integer or a list of integers: %w", err)
	}
	*l = IntOrList{Values: many}
	return nil
}

func (l IntOrList) MarshalJSON() ([]byte, error) {
	if l.Scalar && len(l.Values) == 1 {
		return json.Marshal(l.Values[0])
	}
	return json.Marshal(l.Values)
}
