/// A dictionary that remembers the order of use and, when full, drops the least recently used
/// entry — every operation O(1): a hash map to slots of a doubly linked list kept in an array.
/// A removed entry's key and value are released at once (its slot is reused later).
package struct LRUDictionary<Key: Hashable, Value> {
    fileprivate struct Slot {
        var entry: (key: Key, value: Value)?
        var newer: Int
        var older: Int
    }

    private var slots: [Slot] = []
    private var index: [Key: Int] = [:]
    private var freeSlots: [Int] = []
    /// The most recently used slot (-1: empty).
    private var newest = -1
    /// The least recently used slot (-1: empty).
    private var oldest = -1

    /// An empty dictionary.
    package init() {}

    package var count: Int { index.count }

    /// The value for `key`, marked as the most recently used.
    package mutating func use(_ key: Key) -> Value? {
        guard let slot = index[key] else { return nil }
        moveToNewest(slot)
        return slots[slot].entry?.value
    }

    /// Sets `value` for `key` as the most recently used; drops the least recently used entry
    /// first when `capacity` entries are already kept.
    package mutating func set(_ key: Key, _ value: Value, capacity: Int) {
        if let slot = index[key] {
            slots[slot].entry = (key, value)
            moveToNewest(slot)
            return
        }
        if index.count >= max(1, capacity), oldest >= 0, let evicted = slots[oldest].entry?.key {
            remove(evicted)
        }
        let slot: Int
        if let free = freeSlots.popLast() {
            slots[free] = Slot(entry: (key, value), newer: -1, older: -1)
            slot = free
        } else {
            slots.append(Slot(entry: (key, value), newer: -1, older: -1))
            slot = slots.count - 1
        }
        index[key] = slot
        linkAsNewest(slot)
    }

    /// Every value, in no particular order (their recency unchanged).
    var values: [Value] { index.values.compactMap { slots[$0].entry?.value } }

    /// Removes `key`'s entry, if any.
    package mutating func remove(_ key: Key) {
        guard let slot = index.removeValue(forKey: key) else { return }
        unlink(slot)
        slots[slot].entry = nil
        freeSlots.append(slot)
    }

    private mutating func moveToNewest(_ slot: Int) {
        guard slot != newest else { return }
        unlink(slot)
        linkAsNewest(slot)
    }

    private mutating func unlink(_ slot: Int) {
        let newer = slots[slot].newer
        let older = slots[slot].older
        if newer >= 0 { slots[newer].older = older } else { newest = older }
        if older >= 0 { slots[older].newer = newer } else { oldest = newer }
        slots[slot].newer = -1
        slots[slot].older = -1
    }

    private mutating func linkAsNewest(_ slot: Int) {
        slots[slot].older = newest
        slots[slot].newer = -1
        if newest >= 0 { slots[newest].newer = slot }
        newest = slot
        if oldest < 0 { oldest = slot }
    }
}

extension LRUDictionary: Sendable where Key: Sendable, Value: Sendable {}
extension LRUDictionary.Slot: Sendable where Key: Sendable, Value: Sendable {}
