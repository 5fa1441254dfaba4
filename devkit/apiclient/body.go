package apiclient

import (
	"encoding/json"
	"strconv"
)

// ReserveBody is the JSON of a reservation, as encoding/json writes the map
// {activity_id, quantity, request_id}, built without reflection: the load generator
// encodes one per buyer. A request id needing escapes goes through encoding/json.
func ReserveBody(activityID, quantity int64, requestID string) []byte {
	if !plain(requestID) {
		b, _ := json.Marshal(map[string]any{"activity_id": activityID, "quantity": quantity, "request_id": requestID})
		return b
	}
	b := make([]byte, 0, 96)
	b = append(b, `{"activity_id":`...)
	b = strconv.AppendInt(b, activityID, 10)
	b = append(b, `,"quantity":`...)
	b = strconv.AppendInt(b, quantity, 10)
	b = append(b, `,"request_id":"`...)
	b = append(b, requestID...)
	return append(b, `"}`...)
}

// plain: printable ASCII that JSON and encoding/json's HTML escaping leave as it is.
func plain(s string) bool {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c < 0x20 || c >= 0x7f, c == '"', c == '\\', c == '<', c == '>', c == '&':
			return false
		}
	}
	return true
}
