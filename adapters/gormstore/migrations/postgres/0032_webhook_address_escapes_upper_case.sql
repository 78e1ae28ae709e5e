-- webhook addresses with the hex digits of their escapes upper-cased
--
-- core.CheckWebhookURL now upper-cases the hex digits of every escape it
-- keeps, in the path and the query (RFC 3986 6.2.2.1: %2f is %2F), so
-- webhooks_owner_url refuses a second spelling of one address. This step
-- brings the webhooks stored before to that form: without it, an address
-- stored as .../a%2fb could be added again, in the same spelling, as a
-- second webhook. Scheme and host hold no escape; a % followed by two hex
-- digits is an escape wherever it is in a stored address, as core reads it.
-- A row whose new form another webhook of its owner has or would get is
-- left as it was (both were accepted as two webhooks, each with its secret
-- and log, and neither is dropped), as step 31 did. Channels are not
-- touched: their url is a redacted label, not under the index.

-- Several steps of REPLACE, since SQLite's parser nests only so deep.
CREATE TEMP TABLE webhook_url_upper AS
SELECT id, owner_id, url, url AS norm FROM webhooks WHERE kind = 'webhook';
UPDATE webhook_url_upper SET norm =
	REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(norm
		, '%0a', '%0A')
		, '%0b', '%0B')
		, '%0c', '%0C')
		, '%0d', '%0D')
		, '%0e', '%0E')
		, '%0f', '%0F')
		, '%1a', '%1A')
		, '%1b', '%1B')
		, '%1c', '%1C')
		, '%1d', '%1D')
		, '%1e', '%1E')
		, '%1f', '%1F')
		, '%2a', '%2A')
		, '%2b', '%2B')
		, '%2c', '%2C')
		, '%2d', '%2D')
		, '%2e', '%2E')
		, '%2f', '%2F')
		, '%3a', '%3A');
UPDATE webhook_url_upper SET norm =
	REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(norm
		, '%3b', '%3B')
		, '%3c', '%3C')
		, '%3d', '%3D')
		, '%3e', '%3E')
		, '%3f', '%3F')
		, '%4a', '%4A')
		, '%4b', '%4B')
		, '%4c', '%4C')
		, '%4d', '%4D')
		, '%4e', '%4E')
		, '%4f', '%4F')
		, '%5a', '%5A')
		, '%5b', '%5B')
		, '%5c', '%5C')
		, '%5d', '%5D')
		, '%5e', '%5E')
		, '%5f', '%5F')
		, '%6a', '%6A')
		, '%6b', '%6B');
UPDATE webhook_url_upper SET norm =
	REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(norm
		, '%6c', '%6C')
		, '%6d', '%6D')
		, '%6e', '%6E')
		, '%6f', '%6F')
		, '%7a', '%7A')
		, '%7b', '%7B')
		, '%7c', '%7C')
		, '%7d', '%7D')
		, '%7e', '%7E')
		, '%7f', '%7F')
		, '%8a', '%8A')
		, '%8b', '%8B')
		, '%8c', '%8C')
		, '%8d', '%8D')
		, '%8e', '%8E')
		, '%8f', '%8F')
		, '%9a', '%9A')
		, '%9b', '%9B')
		, '%9c', '%9C');
UPDATE webhook_url_upper SET norm =
	REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(norm
		, '%9d', '%9D')
		, '%9e', '%9E')
		, '%9f', '%9F')
		, '%a0', '%A0')
		, '%a1', '%A1')
		, '%a2', '%A2')
		, '%a3', '%A3')
		, '%a4', '%A4')
		, '%a5', '%A5')
		, '%a6', '%A6')
		, '%a7', '%A7')
		, '%a8', '%A8')
		, '%a9', '%A9')
		, '%aa', '%AA')
		, '%ab', '%AB')
		, '%ac', '%AC')
		, '%ad', '%AD')
		, '%ae', '%AE')
		, '%af', '%AF');
UPDATE webhook_url_upper SET norm =
	REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(norm
		, '%aA', '%AA')
		, '%aB', '%AB')
		, '%aC', '%AC')
		, '%aD', '%AD')
		, '%aE', '%AE')
		, '%aF', '%AF')
		, '%b0', '%B0')
		, '%b1', '%B1')
		, '%b2', '%B2')
		, '%b3', '%B3')
		, '%b4', '%B4')
		, '%b5', '%B5')
		, '%b6', '%B6')
		, '%b7', '%B7')
		, '%b8', '%B8')
		, '%b9', '%B9')
		, '%ba', '%BA')
		, '%bb', '%BB')
		, '%bc', '%BC');
UPDATE webhook_url_upper SET norm =
	REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(norm
		, '%bd', '%BD')
		, '%be', '%BE')
		, '%bf', '%BF')
		, '%bA', '%BA')
		, '%bB', '%BB')
		, '%bC', '%BC')
		, '%bD', '%BD')
		, '%bE', '%BE')
		, '%bF', '%BF')
		, '%c0', '%C0')
		, '%c1', '%C1')
		, '%c2', '%C2')
		, '%c3', '%C3')
		, '%c4', '%C4')
		, '%c5', '%C5')
		, '%c6', '%C6')
		, '%c7', '%C7')
		, '%c8', '%C8')
		, '%c9', '%C9');
UPDATE webhook_url_upper SET norm =
	REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(norm
		, '%ca', '%CA')
		, '%cb', '%CB')
		, '%cc', '%CC')
		, '%cd', '%CD')
		, '%ce', '%CE')
		, '%cf', '%CF')
		, '%cA', '%CA')
		, '%cB', '%CB')
		, '%cC', '%CC')
		, '%cD', '%CD')
		, '%cE', '%CE')
		, '%cF', '%CF')
		, '%d0', '%D0')
		, '%d1', '%D1')
		, '%d2', '%D2')
		, '%d3', '%D3')
		, '%d4', '%D4')
		, '%d5', '%D5')
		, '%d6', '%D6');
UPDATE webhook_url_upper SET norm =
	REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(norm
		, '%d7', '%D7')
		, '%d8', '%D8')
		, '%d9', '%D9')
		, '%da', '%DA')
		, '%db', '%DB')
		, '%dc', '%DC')
		, '%dd', '%DD')
		, '%de', '%DE')
		, '%df', '%DF')
		, '%dA', '%DA')
		, '%dB', '%DB')
		, '%dC', '%DC')
		, '%dD', '%DD')
		, '%dE', '%DE')
		, '%dF', '%DF')
		, '%e0', '%E0')
		, '%e1', '%E1')
		, '%e2', '%E2')
		, '%e3', '%E3');
UPDATE webhook_url_upper SET norm =
	REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(norm
		, '%e4', '%E4')
		, '%e5', '%E5')
		, '%e6', '%E6')
		, '%e7', '%E7')
		, '%e8', '%E8')
		, '%e9', '%E9')
		, '%ea', '%EA')
		, '%eb', '%EB')
		, '%ec', '%EC')
		, '%ed', '%ED')
		, '%ee', '%EE')
		, '%ef', '%EF')
		, '%eA', '%EA')
		, '%eB', '%EB')
		, '%eC', '%EC')
		, '%eD', '%ED')
		, '%eE', '%EE')
		, '%eF', '%EF')
		, '%f0', '%F0');
UPDATE webhook_url_upper SET norm =
	REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(norm
		, '%f1', '%F1')
		, '%f2', '%F2')
		, '%f3', '%F3')
		, '%f4', '%F4')
		, '%f5', '%F5')
		, '%f6', '%F6')
		, '%f7', '%F7')
		, '%f8', '%F8')
		, '%f9', '%F9')
		, '%fa', '%FA')
		, '%fb', '%FB')
		, '%fc', '%FC')
		, '%fd', '%FD')
		, '%fe', '%FE')
		, '%ff', '%FF')
		, '%fA', '%FA')
		, '%fB', '%FB')
		, '%fC', '%FC')
		, '%fD', '%FD');
UPDATE webhook_url_upper SET norm =
	REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(norm
		, '%fE', '%FE')
		, '%fF', '%FF')
		, '%Aa', '%AA')
		, '%Ab', '%AB')
		, '%Ac', '%AC')
		, '%Ad', '%AD')
		, '%Ae', '%AE')
		, '%Af', '%AF')
		, '%Ba', '%BA')
		, '%Bb', '%BB')
		, '%Bc', '%BC')
		, '%Bd', '%BD')
		, '%Be', '%BE')
		, '%Bf', '%BF')
		, '%Ca', '%CA')
		, '%Cb', '%CB')
		, '%Cc', '%CC')
		, '%Cd', '%CD')
		, '%Ce', '%CE');
UPDATE webhook_url_upper SET norm =
	REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(norm
		, '%Cf', '%CF')
		, '%Da', '%DA')
		, '%Db', '%DB')
		, '%Dc', '%DC')
		, '%Dd', '%DD')
		, '%De', '%DE')
		, '%Df', '%DF')
		, '%Ea', '%EA')
		, '%Eb', '%EB')
		, '%Ec', '%EC')
		, '%Ed', '%ED')
		, '%Ee', '%EE')
		, '%Ef', '%EF')
		, '%Fa', '%FA')
		, '%Fb', '%FB')
		, '%Fc', '%FC')
		, '%Fd', '%FD')
		, '%Fe', '%FE')
		, '%Ff', '%FF');

UPDATE webhooks SET url = (SELECT n.norm FROM webhook_url_upper n WHERE n.id = webhooks.id)
WHERE id IN (SELECT n.id FROM webhook_url_upper n WHERE n.norm <> n.url
	AND NOT EXISTS (SELECT 1 FROM webhook_url_upper o WHERE o.owner_id = n.owner_id AND o.id <> n.id AND o.norm = n.norm));

DROP TABLE webhook_url_upper;
