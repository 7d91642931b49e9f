"""Ephemeral ports (endpoint=host:0 on subscriptions, control=host:0 on publications), the bound
addresses clients read from the local-socket-address counters, and channel status."""

from __future__ import annotations


import pytest

import aeron_async
from aeron_async import ChannelStatus
from aeron_async.counters import TYPE_LOCAL_SOCKET_ADDRESS, TYPE_RECEIVE_CHANNEL_STATUS, TYPE_SEND_CHANNEL_STATUS
from conftest import UDP_SETTINGS, offer_all, wait_for

def port_of(address: str) -> int:
    host, _, port = address.rpartition(":")
    assert host == "127.0.0.1", address
    return int(port)


def test_a_subscription_on_port_0_binds_a_free_port_that_publications_reach(udp_client: aeron_async.Aeron) -> None:
    sub = udp_client.add_subscription("aeron:udp?endpoint=127.0.0.1:0", 41)
    assert sub.channel_status == ChannelStatus.ACTIVE
    assert sub.channel_status_id >= 0
    addresses = sub.local_socket_addresses
    assert len(addresses) == 1 and port_of(addresses[0]) > 0
    # the counters say the same, as Aeron's LocalSocketAddressStatus lays them out
    reader = udp_client.counters_reader
    status = reader.find_by_id(sub.channel_status_id)
    assert status is not None and status.type_id == TYPE_RECEIVE_CHANNEL_STATUS and status.value == ChannelStatus.ACTIVE
    bound = [r for r in reader.find_by_type_id(TYPE_LOCAL_SOCKET_ADDRESS)
             if r.label == f"rcv-local-sockaddr: {sub.channel_status_id} {addresses[0]}"]
    assert len(bound) == 1 and bound[0].value == ChannelStatus.ACTIVE
    # a publication to the bound address connects and delivers
    pub = udp_client.add_publication(f"aeron:udp?endpoint={addresses[0]}", 41)
    wait_for(lambda: pub.is_connected, timeout=10, what="the publication to connect")
    offer_all(pub, b"to an ephemeral port")
    got = wait_for(lambda: sub.poll_messages(), timeout=10, what="the message")
    assert [m.data for m in got] == [b"to an ephemeral port"]


def test_each_port_0_subscription_gets_its_own_port(udp_client: aeron_async.Aeron) -> None:
    subs = [udp_client.add_subscription("aeron:udp?endpoint=127.0.0.1:0", 42 + i) for i in range(3)]
    ports = {port_of(s.local_socket_addresses[0]) for s in subs}
    assert len(ports) == 3 and 0 not in ports
    assert len({s.channel_status_id for s in subs}) == 3


def test_a_publication_with_control_port_0_sends_from_a_free_port(udp_client: aeron_async.Aeron) -> None:
    sub = udp_client.add_subscription("aeron:udp?endpoint=127.0.0.1:0", 45)
    target = sub.local_socket_addresses[0]
    pub = udp_client.add_publication(f"aeron:udp?endpoint={target}|control=127.0.0.1:0", 45)
    assert pub.channel_status == ChannelStatus.ACTIVE
    status = udp_client.counters_reader.find_by_id(pub.channel_status_id)
    assert status is not None and status.type_id == TYPE_SEND_CHANNEL_STATUS
    addresses = pub.local_socket_addresses
    assert len(addresses) == 1 and port_of(addresses[0]) > 0 and addresses[0] != target
    wait_for(lambda: pub.is_connected, timeout=10, what="the publication to connect")
    image = wait_for(lambda: sub.images, timeout=10, what="an image")[0]
    # the subscriber sees the data come from the publication's bound control address
    assert image.source_identity == addresses[0]
    offer_all(pub, b"from an ephemeral port")
    got = wait_for(lambda: sub.poll_messages(), timeout=10, what="the message")
    assert [m.data for m in got] == [b"from an ephemeral port"]


def test_a_publication_with_a_fixed_control_address_binds_it(udp_client: aeron_async.Aeron) -> None:
    sub = udp_client.add_subscription("aeron:udp?endpoint=127.0.0.1:0", 46)
    first = udp_client.add_publication(
        f"aeron:udp?endpoint={sub.local_socket_addresses[0]}|control=127.0.0.1:0", 46)
    control = first.local_socket_addresses[0]
    first.close()
    # once the first endpoint is gone its port is free again: wait for its counters to go
    reader = udp_client.counters_reader
    wait_for(lambda: not [r for r in reader.find_by_type_id(TYPE_LOCAL_SOCKET_ADDRESS) if r.label.endswith(control)],
             timeout=10, what="the closed publication's endpoint to be freed")
    pub = udp_client.add_publication(f"aeron:udp?endpoint={sub.local_socket_addresses[0]}|control={control}", 46)
    assert pub.local_socket_addresses == [control]


def test_closing_releases_the_channel_and_its_address(udp_client: aeron_async.Aeron) -> None:
    sub = udp_client.add_subscription("aeron:udp?endpoint=127.0.0.1:0", 47)
    status_id = sub.channel_status_id
    address = sub.local_socket_addresses[0]
    reader = udp_client.counters_reader

    def bound() -> list[aeron_async.CounterRecord]:
        return [r for r in reader.find_by_type_id(TYPE_LOCAL_SOCKET_ADDRESS) if r.label.endswith(" " + address)]

    assert len(bound()) == 1
    sub.close()
    wait_for(lambda: not bound() and reader.find_by_id(status_id) is None, timeout=10,
             what="the endpoint's counters to be freed")
    assert reader.local_socket_addresses(status_id) == []
    with pytest.raises(aeron_async.ClosedError):
        sub.channel_status  # noqa: B018


def test_ipc_channels_are_active_with_no_addresses(udp_client: aeron_async.Aeron) -> None:
    sub = udp_client.add_subscription("aeron:ipc", 48)
    pub = udp_client.add_publication("aeron:ipc", 48)
    for resource in (sub, pub):
        assert resource.channel_status_id == -1
        assert resource.channel_status == ChannelStatus.ACTIVE
        assert resource.local_socket_addresses == []


def test_port_0_where_it_cannot_work_is_refused(udp_client: aeron_async.Aeron) -> None:
    with pytest.raises(aeron_async.InvalidChannelError, match="port"):
        udp_client.add_publication("aeron:udp?endpoint=127.0.0.1:0", 49)
    with pytest.raises(aeron_async.InvalidChannelError, match="control= on a subscription"):
        udp_client.add_subscription("aeron:udp?endpoint=127.0.0.1:0|control=127.0.0.1:0", 49)


@pytest.mark.anyio
async def test_async_subscription_on_port_0(aeron_dir: str) -> None:
    async with aeron_async.connect(aeron_dir, embedded_driver=True, **UDP_SETTINGS) as aclient:
        sub = await aclient.add_subscription("aeron:udp?endpoint=127.0.0.1:0", 50)
        address = sub.subscription.local_socket_addresses[0]
        pub = await aclient.add_publication(f"aeron:udp?endpoint={address}", 50)
        await pub.offer(b"async to port 0")
        assert (await sub.receive()).data == b"async to port 0"


def test_the_same_drivers_closing_endpoint_is_named_when_it_still_holds_the_port(aeron_dir: str) -> None:
    """A subscription with control= closed, then the plain endpoint added at once: while the closing
    endpoint still holds the port the refusal names this driver's own endpoint and when it is free
    (not "another socket, perhaps another driver"), and the add succeeds after that."""
    from conftest import free_udp_port

    port, control = free_udp_port(), free_udp_port()
    # a long timer interval keeps the closing endpoint for the first add (it closes on a timer tick)
    with aeron_async.MediaDriver.launch(aeron_dir=aeron_dir, **{**UDP_SETTINGS, "timer_interval": "2s"}), \
            aeron_async.Aeron.connect(aeron_dir) as client:
        client.add_subscription(f"aeron:udp?endpoint=127.0.0.1:{port}|control=127.0.0.1:{control}", 48).close()
        with pytest.raises(aeron_async.RegistrationError) as refused:
            client.add_subscription(f"aeron:udp?endpoint=127.0.0.1:{port}", 48)
        text = str(refused.value)
        assert "perhaps another driver" not in text, text
        assert f"port {port} is still held by this driver's own receive endpoint" in text, text
        assert "within about 4000 ms" in text and "add the subscription again after that" in text, text

        def added() -> aeron_async.Subscription | None:
            try:
                return client.add_subscription(f"aeron:udp?endpoint=127.0.0.1:{port}", 48)
            except aeron_async.RegistrationError:
                return None

        subscription = wait_for(added, timeout=15, interval=0.1, what="the port free again")
        subscription.close()
