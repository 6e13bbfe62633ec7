"""The broker fixture itself: a topic with partitions takes records and gives them back."""

from __future__ import annotations

from servers.kafka import KafkaBroker


def test_broker_round_trips_records_on_every_partition(kafka_broker: KafkaBroker) -> None:
    from confluent_kafka import Consumer, Producer, TopicPartition

    topic = kafka_broker.new_topic("fixture", partitions=3)
    producer = Producer({"bootstrap.servers": kafka_broker.bootstrap})
    for p in range(3):
        producer.produce(topic, value=f"v{p}".encode(), partition=p)
    assert producer.flush(30) == 0
    consumer = Consumer(
        {"bootstrap.servers": kafka_broker.bootstrap, "group.id": "fixture", "auto.offset.reset": "earliest"}
    )
    # assigned, not subscribed: a group join waits for the broker's rebalance delay
    consumer.assign([TopicPartition(topic, p, 0) for p in range(3)])
    seen: dict[int, bytes] = {}
    try:
        for _ in range(100):
            msg = consumer.poll(0.5)
            if msg is not None and msg.error() is None:
                seen[msg.partition()] = msg.value()
            if len(seen) == 3:
                break
    finally:
        consumer.close()
    assert seen == {0: b"v0", 1: b"v1", 2: b"v2"}
