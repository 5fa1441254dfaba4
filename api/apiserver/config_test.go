package apiserver_test

import (
	"testing"

	"github.com/seckill/seckill/api/apiserver"
)

func TestLoadConfig(t *testing.T) {
	t.Run("shipped file", func(t *testing.T) {
		c, err := apiserver.LoadConfig("../../etc/seckill-api.yaml")
		if err != nil {
			t.Fatal(err)
		}
		if c.Port != 8888 || c.MaxBytes != 64<<10 || len(c.Inventory.Endpoints) == 0 || !c.Redis.DisableIdentity {
			t.Fatalf("unexpected config %+v", c)
		}
		if err := c.Validate(); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("secrets from the environment", func(t *testing.T) {
		t.Setenv(apiserver.EnvBuyerSecret, "buyer-from-env-0123456789")
		t.Setenv(apiserver.EnvMerchantSecret, "merchant-from-env-0123456789")
		c, err := apiserver.LoadConfig("../../etc/seckill-api.yaml")
		if err != nil {
			t.Fatal(err)
		}
		if c.BuyerAuth.AccessSecret != "buyer-from-env-0123456789" ||
			c.MerchantAuth.AccessSecret != "merchant-from-env-0123456789" {
			t.Fatalf("secrets not overridden: %+v %+v", c.BuyerAuth, c.MerchantAuth)
		}
	})
	t.Run("interchangeable or weak secrets are refused", func(t *testing.T) {
		c, err := apiserver.LoadConfig("../../etc/seckill-api.yaml")
		if err != nil {
			t.Fatal(err)
		}
		same := c
		same.MerchantAuth.AccessSecret = same.BuyerAuth.AccessSecret
		short := c
		short.BuyerAuth.AccessSecret = "short"
		for name, bad := range map[string]apiserver.Config{"same": same, "short": short} {
			if _, err := apiserver.New(bad); err == nil {
				t.Errorf("%s secrets accepted", name)
			}
		}
	})
}
