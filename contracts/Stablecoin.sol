// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {ERC20} from "@openzeppelin/contracts/token/ERC20/ERC20.sol";
import {Ownable} from "@openzeppelin/contracts/access/Ownable.sol";

/// A fiat-backed stablecoin as the platform's sandbox chains carry it: the issuer mints and burns,
/// and, like USDC and USDT, may block an address from sending or receiving.
contract Stablecoin is ERC20, Ownable {
    uint8 private immutable _decimals;
    mapping(address => bool) public blocked;

    error AddressBlocked(address account);
    event Blocked(address indexed account, bool isBlocked);

    constructor(string memory name_, string memory symbol_, uint8 decimals_) ERC20(name_, symbol_) Ownable(msg.sender) {
        _decimals = decimals_;
    }

    function decimals() public view override returns (uint8) {
        return _decimals;
    }

    function mint(address to, uint256 amount) external onlyOwner {
        _mint(to, amount);
    }

    function setBlocked(address account, bool isBlocked) external onlyOwner {
        blocked[account] = isBlocked;
        emit Blocked(account, isBlocked);
    }

    function _update(address from, address to, uint256 value) internal override {
        if (blocked[from]) revert AddressBlocked(from);
        if (blocked[to]) revert AddressBlocked(to);
        super._update(from, to, value);
    }
}
