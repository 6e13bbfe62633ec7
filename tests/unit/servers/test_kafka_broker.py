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


def test_read_takes_a_whole_batch_and_an_empty_topic(kafka_broker: KafkaBroker) -> None:
    """`KafkaBroker.read` reads a topic to its end although tansu's end offset is the last
    batch's first offset + 1 (a 20-record batch answers 1), and an empty topic at once."""
    from confluent_kafka import Producer

    topic = kafka_broker.new_topic("read-batch", partitions=2)
    producer = Producer({"bootstrap.servers": kafka_broker.bootstrap, "linger.ms": 200})
    for i in range(20):
        producer.produce(topic, value=str(i).encode(), partition=0)
    assert producer.flush(30) == 0
    got = kafka_broker.read(topic, 2)
    assert [m.value() for m in got] == [str(i).encode() for i in range(20)]
    assert kafka_broker.read(kafka_broker.new_topic("read-empty")) == []
