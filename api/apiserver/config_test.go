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
		// It ships no secret: without the environment the gateway does not start.
		if err := c.Validate(); err == nil {
			t.Fatal("the shipped file validates without secrets")
		}
	})
	t.Run("secrets from the environment", func(t *testing.T) {
		t.Setenv(apiserver.EnvBuyerSecret, goodBuyer)
		t.Setenv(apiserver.EnvMerchantSecret, goodMerchant)
		c, err := apiserver.LoadConfig("../../etc/seckill-api.yaml")
		if err != nil {
			t.Fatal(err)
		}
		if c.BuyerAuth.AccessSecret != goodBuyer || c.MerchantAuth.AccessSecret != goodMerchant || c.Validate() != nil {
			t.Fatalf("secrets not overridden: %+v %+v", c.BuyerAuth, c.MerchantAuth)
		}
	})
	t.Run("interchangeable or weak secrets are refused", func(t *testing.T) {
		t.Setenv(apiserver.EnvBuyerSecret, goodBuyer)
		t.Setenv(apiserver.EnvMerchantSecret, goodMerchant)
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
