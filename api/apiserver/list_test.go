package apiserver_test

import (
	"fmt"
	"net/http"
	"testing"
)

type activityList struct {
	Activities []activity `json:"activities"`
	Page       int64      `json:"page"`
	Size       int64      `json:"size"`
	Total      int64      `json:"total"`
}

// TestListActivities: GET /v1/admin/activities pages through the calling merchant's own
// activities, newest first; another merchant's are never listed; bad pages are 400.
func TestListActivities(t *testing.T) {
	e := start(t)
	var ids []int64
	for i := range 5 {
		ids = append(ids, e.create(map[string]any{"name": fmt.Sprintf("mine-%d", i)}).ActivityID)
	}
	other := merchantToken(t, merchantID+1)
	now := int64(1_900_000_000)
	e.call(http.MethodPost, "/v1/admin/activities", other, map[string]any{"sku_id": 1, "name": "theirs",
		"stock": 5, "start_time": now, "end_time": now + 60}, nil)
	mine := merchantToken(t, merchantID)

	var first, second, third activityList
	e.call(http.MethodGet, "/v1/admin/activities?page=1&size=2", mine, nil, &first)
	e.call(http.MethodGet, "/v1/admin/activities?page=2&size=2", mine, nil, &second)
	e.call(http.MethodGet, "/v1/admin/activities?page=3&size=2", mine, nil, &third)
	var got []int64
	for _, l := range []activityList{first, second, third} {
		if l.Total != 5 || l.Size != 2 {
			t.Fatalf("page %d: total %d size %d, want 5 and 2", l.Page, l.Total, l.Size)
		}
		for _, a := range l.Activities {
			got = append(got, a.ActivityID)
			if a.Name == "theirs" {
				t.Fatalf("another merchant's activity listed: %+v", a)
			}
		}
	}
	want := []int64{ids[4], ids[3], ids[2], ids[1], ids[0]}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("listed %v, want newest first %v", got, want)
	}
	if first.Activities[0].Stock != 10 || first.Activities[0].Name != "mine-4" {
		t.Fatalf("first entry %+v", first.Activities[0])
	}
	var empty, defaults activityList
	e.call(http.MethodGet, "/v1/admin/activities?page=9&size=2", mine, nil, &empty)
	if len(empty.Activities) != 0 || empty.Total != 5 || empty.Activities == nil {
		t.Fatalf("past the end: %+v, want [] and total 5", empty)
	}
	e.call(http.MethodGet, "/v1/admin/activities", mine, nil, &defaults)
	if defaults.Page != 1 || defaults.Size != 20 || len(defaults.Activities) != 5 {
		t.Fatalf("defaults: page %d size %d, %d activities", defaults.Page, defaults.Size, len(defaults.Activities))
	}
	for _, q := range []string{"page=0", "page=-1", "size=0", "size=101", "page=x", "size=1.5", "page=1000001"} {
		e.expectErr(http.MethodGet, "/v1/admin/activities?"+q, mine, nil, http.StatusBadRequest, "INVALID_ARGUMENT")
	}
	e.expectErr(http.MethodGet, "/v1/admin/activities", "", nil, http.StatusUnauthorized, "UNAUTHORIZED")
	e.expectErr(http.MethodGet, "/v1/admin/activities", buyerToken(t, 1), nil, http.StatusUnauthorized, "UNAUTHORIZED")
}
