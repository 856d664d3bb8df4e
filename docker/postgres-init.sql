-- The app's own database and role, beside Temporal's (created on the first start of the volume).
CREATE ROLE durable_inbox LOGIN PASSWORD 'durable_inbox';
CREATE DATABASE durable_inbox OWNER durable_inbox;
