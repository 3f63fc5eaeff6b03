DROP TABLE agent_delivery_dedupe;
DROP TABLE agent_deliveries;
